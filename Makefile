# The two-command entry points: `make demo` and `make test` (see README.md).
# Both install what is missing first (scripts/deps.sh).
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo
ifdef CI
CMAKE_FLAGS += -DNP_WERROR=ON
endif
# Sanitizer builds that `make test` runs after the normal one.
SANITIZERS ?= address,undefined thread

.PHONY: all deps build demo test test-sanitizers bench install clean

all: build

deps:
	@sh scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

DEMO = $(BUILD)/demo
demo: build
	@echo "== 1. inside the program: examples/demo.c, two threads, call trace + function cost =="
	@$(BUILD)/examples/demo
	@echo
	@echo "== 2. from outside: nanoprof record, then report, tree, graph, flame and dump =="
	@rm -rf $(DEMO) && mkdir -p $(DEMO)
	$(BUILD)/src/nanoprof record -o $(DEMO)/trace -- $(BUILD)/examples/demo 2>/dev/null >/dev/null
	$(BUILD)/src/nanoprof report $(DEMO)/trace
	$(BUILD)/src/nanoprof tree --depth=4 $(DEMO)/trace
	$(BUILD)/src/nanoprof graph $(DEMO)/trace load_file
	$(BUILD)/src/nanoprof flame -o $(DEMO)/flame.svg $(DEMO)/trace
	$(BUILD)/src/nanoprof dump --format=chrome -o $(DEMO)/trace.json $(DEMO)/trace
	$(BUILD)/src/nanoprof dump --format=callgrind -o $(DEMO)/callgrind.out $(DEMO)/trace
	@echo
	@echo "== 3. ARM firmware, unchanged, in the emulator: nanoprof emu, then tree =="
	$(BUILD)/src/nanoprof emu -o $(DEMO)/firmware --report $(BUILD)/tests/firmware/instr_thumb.elf >/dev/null
	$(BUILD)/src/nanoprof tree --depth=3 $(DEMO)/firmware
	@echo
	@echo "== 4. Cortex-M firmware, two tasks a PendSV switches, unchanged, on the emulator's Cortex-M3: cycles, tasks named by the kernel =="
	$(BUILD)/src/nanoprof emu --board mps2-an385 --rtos freertos -o $(DEMO)/tasks $(BUILD)/tests/firmware/cm_tasks_emu.elf 2>/dev/null
	$(BUILD)/src/nanoprof tree --depth=3 $(DEMO)/tasks
	@echo
	@echo "== 5. the same firmware in QEMU, its calls from QEMU's execution log: emu --qemu, then report =="
	$(BUILD)/src/nanoprof emu --qemu mps2-an385 -o $(DEMO)/tasks_qemu $(BUILD)/tests/firmware/cm_tasks.elf >/dev/null
	$(BUILD)/src/nanoprof report $(DEMO)/tasks_qemu
	@echo "written: $(DEMO)/flame.svg (open in a browser), $(DEMO)/trace.json (ui.perfetto.dev),"
	@echo "         $(DEMO)/callgrind.out (kcachegrind, callgrind_annotate)"

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	@$(MAKE) --no-print-directory test-sanitizers

test-sanitizers: deps
	@set -e; for s in $(SANITIZERS); do \
	  d=$(BUILD)-$$(echo $$s | tr ',' '-'); \
	  echo "== sanitizer build: $$s ($$d) =="; \
	  cmake -S . -B $$d $(CMAKE_FLAGS) -DNP_SANITIZE=$$s -DNP_BUILD_BENCH=OFF >/dev/null; \
	  cmake --build $$d -j $(JOBS) >/dev/null; \
	  (cd $$d && ctest --output-on-failure -j $(JOBS) -LE nosan); \
	done

bench: build
	@sh scripts/deps.sh bench
	@sh bench/run.sh $(BUILD)

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD)-*
