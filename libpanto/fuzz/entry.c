/* A fuzz target's libFuzzer entry point: run.py compiles this once per target, with
 * -DTARGET=panto_fuzz_NAME, and links it with libpanto_fuzz.a (libfuzzer.zig). */
#include <stddef.h>
#include <stdint.h>

int TARGET(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return TARGET(data, size);
}
