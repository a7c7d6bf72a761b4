// glibc's mallopt (not in Swift's Glibc module); nothing on other C libraries.
#if defined(__linux__)
#include <features.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#endif
