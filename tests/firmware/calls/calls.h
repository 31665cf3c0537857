/* calls.h - the functions of the calls firmware, across its C and
 * assembly files (README.md lists what each exercises). */
#ifndef NP_FW_CALLS_H
#define NP_FW_CALLS_H

/* calls_main.c, in the firmware's main state */
int c_leaf(int x);
int c_nonleaf(int x);
int c_target(int x);
int c_indirect(int x);
int c_recurse(int n);
int cross_back(int x);
/* calls_cross.c, in the other state */
int cross_call(int x);
/* calls_arm.S, calls_thumb.S, calls_v5.S */
int np_forms_arm(int x);
int np_forms_thumb(int x);
int np_forms_v5(int x);

#endif
