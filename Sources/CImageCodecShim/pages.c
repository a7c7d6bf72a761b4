// Whole pages from the kernel for the largest, longest-lived buffers (a downloaded source, a file
// read whole): grown by moving the pages (mremap), freed back to the system at once (munmap).
// Below IEC_PAGES_FROM the C allocator serves them: fresh pages fault in one by one (about 2 %
// of a 512 px thumbnail's CPU for a 400 KB source), while the heap hands back memory it has
// already touched, and steps that small are not what piles up in its free lists. Which of the
// two holds a buffer follows from its size alone, so a resize across the line moves it.
// Elsewhere than Linux, the C allocator serves every size.
#define _GNU_SOURCE
#include "CImageCodecShim.h"

#include <stdlib.h>
#include <string.h>
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

#define IEC_PAGES_FROM ((size_t)4 << 20)

#if defined(__linux__)
static int iec_pages_mapped(size_t bytes) { return bytes >= IEC_PAGES_FROM; }
#endif

void *iec_pages_allocate(size_t bytes) {
#if defined(__linux__)
    if (!iec_pages_mapped(bytes)) return malloc(bytes ? bytes : 1);
    void *mapped = mmap(NULL, page_rounded(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return mapped == MAP_FAILED ? NULL : mapped;
#else
    return malloc(bytes ? bytes : 1);
#endif
}

void *iec_pages_resize(void *pages, size_t old_bytes, size_t new_bytes) {
#if defined(__linux__)
    int was_mapped = iec_pages_mapped(old_bytes), is_mapped = iec_pages_mapped(new_bytes);
    if (!was_mapped && !is_mapped) return realloc(pages, new_bytes ? new_bytes : 1);
    if (was_mapped != is_mapped) {
        void *moved = iec_pages_allocate(new_bytes);
        if (moved == NULL) return NULL;
        memcpy(moved, pages, old_bytes < new_bytes ? old_bytes : new_bytes);
        iec_pages_free(pages, old_bytes);
        return moved;
    }
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
    if (!iec_pages_mapped(bytes)) {
        free(pages);
        return;
    }
    munmap(pages, page_rounded(bytes));
#else
    (void)bytes;
    free(pages);
#endif
}
