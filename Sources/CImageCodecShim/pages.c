// Whole pages from the kernel for the largest, longest-lived buffers (a downloaded source, a file
// read whole): grown by moving the pages (mremap), freed back to the system at once (munmap).
// Elsewhere than Linux, the C allocator stands in.
#define _GNU_SOURCE
#include "CImageCodecShim.h"

#include <stdlib.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

static size_t page_rounded(size_t bytes) {
    static size_t page = 0;
    if (page == 0) {
        long size = sysconf(_SC_PAGESIZE);
        page = size > 0 ? (size_t)size : 4096;
    }
    if (bytes == 0) bytes = 1;
    return (bytes + page - 1) / page * page;
}

void *iec_pages_allocate(size_t bytes) {
#if defined(__linux__)
    void *mapped = mmap(NULL, page_rounded(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return mapped == MAP_FAILED ? NULL : mapped;
#else
    return malloc(bytes ? bytes : 1);
#endif
}

void *iec_pages_resize(void *pages, size_t old_bytes, size_t new_bytes) {
#if defined(__linux__)
    size_t from = page_rounded(old_bytes), to = page_rounded(new_bytes);
    if (from == to) return pages;
    void *moved = mremap(pages, from, to, MREMAP_MAYMOVE);
    return moved == MAP_FAILED ? NULL : moved;
#else
    (void)old_bytes;
    return realloc(pages, new_bytes ? new_bytes : 1);
#endif
}

void iec_pages_free(void *pages, size_t bytes) {
#if defined(__linux__)
    munmap(pages, page_rounded(bytes));
#else
    (void)bytes;
    free(pages);
#endif
}
