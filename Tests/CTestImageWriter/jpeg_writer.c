#include "CTestImageWriter.h"
#include <stdio.h>
#include <jpeglib.h>
#include <setjmp.h>
#include <stdlib.h>

typedef struct { struct jpeg_error_mgr pub; jmp_buf jump; } test_error_t;

static void test_error_exit(j_common_ptr cinfo) { longjmp(((test_error_t *)cinfo->err)->jump, 1); }

int test_jpeg_write_cmyk(uint32_t width, uint32_t height, const uint8_t *cmyk, int as_ycck,
                         const uint8_t *icc_profile, unsigned int icc_length,
                         uint8_t **out, unsigned long *out_length) {
    struct jpeg_compress_struct cinfo;
    test_error_t error;
    unsigned char *buffer = NULL;
    unsigned long size = 0;
    cinfo.err = jpeg_std_error(&error.pub);
    error.pub.error_exit = test_error_exit;
    if (setjmp(error.jump)) {
        jpeg_destroy_compress(&cinfo);
        free(buffer);
        return 1;
    }
    jpeg_create_compress(&cinfo);
    jpeg_mem_dest(&cinfo, &buffer, &size);
    cinfo.image_width = width;
    cinfo.image_height = height;
    cinfo.input_components = 4;
    cinfo.in_color_space = JCS_CMYK;
    jpeg_set_defaults(&cinfo);
    jpeg_set_colorspace(&cinfo, as_ycck ? JCS_YCCK : JCS_CMYK);
    jpeg_set_quality(&cinfo, 100, TRUE);
    jpeg_start_compress(&cinfo, TRUE);
    if (icc_profile != NULL) jpeg_write_icc_profile(&cinfo, icc_profile, icc_length);
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = (JSAMPROW)(cmyk + (size_t)cinfo.next_scanline * width * 4);
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    *out = buffer;
    *out_length = size;
    return 0;
}

int test_jpeg_write_rgb(uint32_t width, uint32_t height, const uint8_t *rgb, int quality, int restart_interval,
                        int progressive, uint8_t **out, unsigned long *out_length) {
    struct jpeg_compress_struct cinfo;
    test_error_t error;
    unsigned char *buffer = NULL;
    unsigned long size = 0;
    cinfo.err = jpeg_std_error(&error.pub);
    error.pub.error_exit = test_error_exit;
    if (setjmp(error.jump)) {
        jpeg_destroy_compress(&cinfo);
        free(buffer);
        return 1;
    }
    jpeg_create_compress(&cinfo);
    jpeg_mem_dest(&cinfo, &buffer, &size);
    cinfo.image_width = width;
    cinfo.image_height = height;
    cinfo.input_components = 3;
    cinfo.in_color_space = JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality, TRUE);
    cinfo.restart_interval = (unsigned int)restart_interval;
    if (progressive) jpeg_simple_progression(&cinfo);
    jpeg_start_compress(&cinfo, TRUE);
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = (JSAMPROW)(rgb + (size_t)cinfo.next_scanline * width * 3);
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    *out = buffer;
    *out_length = size;
    return 0;
}
