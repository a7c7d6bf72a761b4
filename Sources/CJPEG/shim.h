// jpeglib.h needs size_t and FILE declared before it is included.
#include <stddef.h>
#include <stdio.h>
#include <jpeglib.h>
#include <jerror.h>
