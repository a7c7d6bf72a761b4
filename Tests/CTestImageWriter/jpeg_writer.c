#include "CTestImageWriter.h"
#include <stdio.h>
#include <jpeglib.h>
#include <setjmp.h>
#include <stdlib.h>
#include <zlib.h>

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

/// One scan per AC coefficient of each component, refined bit by bit over `bits` steps after
/// the DC of every component: 1 + 3 × 63 × bits scans.
static int coefficient_script(jpeg_scan_info *scans, int bits) {
    int index = 0;
    scans[index++] = (jpeg_scan_info){3, {0, 1, 2, 0}, 0, 0, 0, 0};
    for (int component = 0; component < 3; component++) {
        for (int k = 1; k < 64; k++) {
            scans[index++] = (jpeg_scan_info){1, {component, 0, 0, 0}, k, k, 0, bits - 1};
            for (int bit = bits - 1; bit > 0; bit--) scans[index++] = (jpeg_scan_info){1, {component, 0, 0, 0}, k, k, bit, bit - 1};
        }
    }
    return index;
}

/// Scan scripts for test_jpeg_write_progressive, for components 0...count-1.
static int progressive_script(jpeg_scan_info *scans, int script, int count) {
    int index = 0;
    if (script == 0) {
        // Spectral selection only (no successive approximation): bands of several widths, so
        // end-of-band runs span many blocks.
        scans[index++] = (jpeg_scan_info){count, {0, 1, 2, 0}, 0, 0, 0, 0};
        for (int component = 0; component < count; component++) {
            scans[index++] = (jpeg_scan_info){1, {component, 0, 0, 0}, 1, 2, 0, 0};
            scans[index++] = (jpeg_scan_info){1, {component, 0, 0, 0}, 3, 9, 0, 0};
            scans[index++] = (jpeg_scan_info){1, {component, 0, 0, 0}, 10, 63, 0, 0};
        }
    } else {
        // Deep successive approximation: each component's DC in its own scans (3 bits held
        // back), AC bands with 4 bits held back and refined one at a time.
        for (int component = 0; component < count; component++) scans[index++] = (jpeg_scan_info){1, {component, 0, 0, 0}, 0, 0, 0, 3};
        for (int component = 0; component < count; component++) {
            scans[index++] = (jpeg_scan_info){1, {component, 0, 0, 0}, 1, 5, 0, 4};
            scans[index++] = (jpeg_scan_info){1, {component, 0, 0, 0}, 6, 63, 0, 4};
        }
        for (int bit = 3; bit >= 0; bit--) {
            if (bit < 3) scans[index++] = (jpeg_scan_info){count, {0, 1, 2, 0}, 0, 0, bit + 1, bit};
            for (int component = 0; component < count; component++) scans[index++] = (jpeg_scan_info){1, {component, 0, 0, 0}, 1, 63, bit + 1, bit};
        }
    }
    return index;
}

/// Gray or RGB samples to a JPEG: `progression` 0 sequential (`script` as
/// test_jpeg_write_sequential's layout), 1 libjpeg's simple progression, 2 progressive_script's
/// `script`, 3 coefficient_script over `script` bits.
static int write_jpeg(uint32_t width, uint32_t height, const uint8_t *samples, int components, int quality, int restart_interval,
                      int progression, int script, uint8_t **out, unsigned long *out_length) {
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
    cinfo.input_components = components;
    cinfo.in_color_space = components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality, TRUE);
    cinfo.restart_interval = (unsigned int)restart_interval;
    if (progression == 0 && (script & 1)) cinfo.optimize_coding = TRUE;
    if (progression == 0 && (script & 2)) {
        // One scan per component, all 64 coefficients: still sequential.
        jpeg_scan_info *scans = (jpeg_scan_info *)(*cinfo.mem->alloc_small)((j_common_ptr)&cinfo, JPOOL_IMAGE, sizeof(jpeg_scan_info) * 3);
        for (int component = 0; component < components; component++) scans[component] = (jpeg_scan_info){1, {component, 0, 0, 0}, 0, 63, 0, 0};
        cinfo.num_scans = components;
        cinfo.scan_info = scans;
    }
    if (progression == 1) jpeg_simple_progression(&cinfo);
    if (progression >= 2) {
        const int most = progression == 2 ? 64 : 1 + 3 * 63 * script;
        jpeg_scan_info *scans = (jpeg_scan_info *)(*cinfo.mem->alloc_small)((j_common_ptr)&cinfo, JPOOL_IMAGE, sizeof(jpeg_scan_info) * most);
        cinfo.num_scans = progression == 2 ? progressive_script(scans, script, components) : coefficient_script(scans, script);
        cinfo.scan_info = scans;
    }
    jpeg_start_compress(&cinfo, TRUE);
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = (JSAMPROW)(samples + (size_t)cinfo.next_scanline * width * (size_t)components);
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
    return write_jpeg(width, height, rgb, 3, quality, restart_interval, progressive > 1 ? 3 : progressive, progressive, out, out_length);
}

int test_jpeg_write_progressive(uint32_t width, uint32_t height, const uint8_t *samples, int components, int quality,
                                int restart_interval, int script, uint8_t **out, unsigned long *out_length) {
    return write_jpeg(width, height, samples, components, quality, restart_interval, 2, script, out, out_length);
}

int test_jpeg_write_sequential(uint32_t width, uint32_t height, const uint8_t *samples, int components, int quality,
                               int restart_interval, int layout, uint8_t **out, unsigned long *out_length) {
    return write_jpeg(width, height, samples, components, quality, restart_interval, 0, layout, out, out_length);
}

int test_deflate(const uint8_t *input, size_t length, uint8_t **out, size_t *out_length) {
    uLongf capacity = compressBound((uLong)length);
    uint8_t *buffer = malloc(capacity);
    if (buffer == NULL) return 1;
    if (compress2(buffer, &capacity, input, (uLong)length, 9) != Z_OK) {
        free(buffer);
        return 1;
    }
    *out = buffer;
    *out_length = capacity;
    return 0;
}
