// Only the declaration in the header is needed; libFuzzer (linked by -sanitize=fuzzer) defines it.
#include "CFuzzDriver.h"
