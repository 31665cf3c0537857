/* rtos.c - an RTOS's task names from the firmware's memory (rtos.h). */
#define _GNU_SOURCE
#include "rtos.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "emu/image.h"

struct np_rtos {
    uint32_t current;   /* the address of the running task's TCB pointer */
    uint32_t name_off;  /* the name's offset in the TCB */
    uint32_t name_len;  /* its bytes, the NUL included when shorter */
    char name[];        /* name_len + 1: the last name read */
};

int np_rtos_known(const char *name)
{
    return name && strcasecmp(name, "freertos") == 0;
}

struct named {
    const char *name;
    uint64_t addr;
};

static int data_named(void *ctx, const char *name, const GElf_Sym *s)
{
    struct named *w = ctx;
    if ((GELF_ST_TYPE(s->st_info) != STT_OBJECT && GELF_ST_TYPE(s->st_info) != STT_NOTYPE) || strcmp(name, w->name))
        return 0;
    w->addr = s->st_value;
    return 1;
}

/* The address of data symbol NAME in ELF's .symtab, or 0. */
static uint64_t data_symbol(Elf *elf, const char *name)
{
    struct named w = { name, 0 };
    np_image_each_symbol(elf, data_named, &w);
    return w.addr;
}

/* The type DIE names, typedefs and qualifiers peeled. */
static bool peeled_type(Dwarf_Die *die, Dwarf_Die *type)
{
    Dwarf_Attribute a;
    return dwarf_attr_integrate(die, DW_AT_type, &a) && dwarf_formref_die(&a, type) && dwarf_peel_type(type, type) == 0;
}

/* A member's offset: a constant, or DWARF 2's DW_OP_plus_uconst. */
static bool member_offset(Dwarf_Die *m, Dwarf_Word *off)
{
    Dwarf_Attribute a;
    if (!dwarf_attr(m, DW_AT_data_member_location, &a))
        return false;
    if (dwarf_formudata(&a, off) == 0)
        return true;
    Dwarf_Op *ops;
    size_t n;
    if (dwarf_getlocation(&a, &ops, &n) == 0 && n == 1 && ops[0].atom == DW_OP_plus_uconst) {
        *off = ops[0].number;
        return true;
    }
    return false;
}

/* STRUCT_DIE's member MEMBER: its offset and its size in bytes. */
static bool find_member(Dwarf_Die *sd, const char *member, Dwarf_Word *off, Dwarf_Word *size)
{
    Dwarf_Die m, type;
    if (dwarf_child(sd, &m) != 0)
        return false;
    do {
        const char *n = dwarf_diename(&m);
        if (dwarf_tag(&m) == DW_TAG_member && n && strcmp(n, member) == 0)
            return member_offset(&m, off) && peeled_type(&m, &type) && dwarf_aggregate_size(&type, size) == 0;
    } while (dwarf_siblingof(&m, &m) == 0);
    return false;
}

/* The first definition (with members) of struct STRUCT_NAME, or of a
 * struct typedef TYPEDEF_NAME names, that has member MEMBER. */
static bool find_struct_member(Dwarf *dw, const char *struct_name, const char *typedef_name, const char *member,
                               Dwarf_Word *off, Dwarf_Word *size)
{
    Dwarf_CU *unit = NULL;
    Dwarf_Die cu, sub, d, sd;
    Dwarf_Half version;
    uint8_t type;
    while (dwarf_get_units(dw, unit, &unit, &version, &type, &cu, &sub) == 0) {
        if (dwarf_child(&cu, &d) != 0)
            continue;
        do { /* a C struct of the kernel's is at the unit's top level */
            const char *n = dwarf_diename(&d);
            int tag = dwarf_tag(&d);
            if (!n)
                continue;
            if (tag == DW_TAG_structure_type && strcmp(n, struct_name) == 0)
                sd = d;
            else if (!(tag == DW_TAG_typedef && strcmp(n, typedef_name) == 0 && peeled_type(&d, &sd) &&
                       dwarf_tag(&sd) == DW_TAG_structure_type))
                continue;
            if (find_member(&sd, member, off, size))
                return true;
        } while (dwarf_siblingof(&d, &d) == 0);
    }
    return false;
}

struct np_rtos *np_rtos_open(const char *name, const char *path, char *err, size_t size)
{
    if (!np_rtos_known(name)) {
        snprintf(err, size, "unknown RTOS '%s': %s", name ? name : "", NP_RTOS_NAMES);
        return NULL;
    }
    elf_version(EV_CURRENT);
    struct np_rtos *r = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
    Dwarf *dw = NULL;
    uint64_t current = 0;
    Dwarf_Word off = 0, len = 0;
    if (!elf)
        snprintf(err, size, "--rtos %s: cannot read %s", name, path);
    else if (!(current = data_symbol(elf, "pxCurrentTCB")))
        snprintf(err, size, "--rtos %s: %s has no pxCurrentTCB: not a FreeRTOS firmware", name, path);
    else if (!(dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL)) ||
             !find_struct_member(dw, "tskTaskControlBlock", "TCB_t", "pcTaskName", &off, &len) || !len ||
             len > 256)
        snprintf(err, size, "--rtos %s: %s has no debug information for TCB_t: build it with -g", name, path);
    else if (!(r = malloc(sizeof *r + len + 1)))
        snprintf(err, size, "out of memory");
    else {
        r->current = (uint32_t)current;
        r->name_off = (uint32_t)off;
        r->name_len = (uint32_t)len;
    }
    if (dw)
        dwarf_end(dw);
    if (elf)
        elf_end(elf);
    if (fd >= 0)
        close(fd);
    return r;
}

const char *np_rtos_thread_name(void *rtos, struct np_cpu *cpu)
{
    struct np_rtos *r = rtos;
    const uint8_t *p = np_cpu_mem(cpu, r->current, 4);
    if (!p)
        return NULL;
    uint32_t tcb = p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    const uint8_t *s = tcb ? np_cpu_mem(cpu, tcb + r->name_off, r->name_len) : NULL;
    if (!s)
        return NULL; /* no task yet */
    uint32_t n = 0;
    while (n < r->name_len && s[n]) {
        if (s[n] < 0x20 || s[n] == 0x7f)
            return NULL; /* not a name: a stale or wild pointer */
        r->name[n] = (char)s[n];
        n++;
    }
    r->name[n] = 0;
    return n ? r->name : NULL;
}

void np_rtos_free(struct np_rtos *r)
{
    free(r);
}
