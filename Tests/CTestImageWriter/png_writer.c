#include "CTestImageWriter.h"
#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

typedef struct { uint8_t *bytes; size_t length, capacity; } buffer_t;

static void write_fn(png_structp png, png_bytep data, size_t length) {
    buffer_t *b = png_get_io_ptr(png);
    if (b->length + length > b->capacity) {
        size_t cap = (b->capacity + length) * 2;
        uint8_t *grown = realloc(b->bytes, cap);
        if (!grown) png_error(png, "oom");
        b->bytes = grown;
        b->capacity = cap;
    }
    memcpy(b->bytes + b->length, data, length);
    b->length += length;
}

static void flush_fn(png_structp png) { (void)png; }

int test_png_write(uint32_t width, uint32_t height, int bit_depth, int color_type, int interlaced,
                   const uint8_t *samples, size_t row_bytes, const uint8_t *palette, int palette_entries,
                   const uint8_t *trans_alpha, int trans_count, int trans_gray, int trans_red,
                   int trans_green, int trans_blue, uint8_t **out, size_t *out_length) {
    buffer_t buffer = {NULL, 0, 0};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    // Any side the format allows (libpng refuses over 1,000,000 unless told), for limit tests.
    if (png != NULL) png_set_user_limits(png, 0x7fffffff, 0x7fffffff);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    png_bytep *volatile rows = NULL;
    if (!png || !info) return 1;
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(rows);
        free(buffer.bytes);
        return 1;
    }
    png_set_write_fn(png, &buffer, write_fn, flush_fn);
    png_set_IHDR(png, info, width, height, bit_depth, color_type,
                 interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    if (palette_entries > 0) {
        png_color colors[256];
        for (int i = 0; i < palette_entries; i++) {
            colors[i].red = palette[i * 3];
            colors[i].green = palette[i * 3 + 1];
            colors[i].blue = palette[i * 3 + 2];
        }
        png_set_PLTE(png, info, colors, palette_entries);
    }
    if (trans_count > 0 || trans_gray >= 0 || trans_red >= 0) {
        png_color_16 color;
        memset(&color, 0, sizeof(color));
        color.gray = (png_uint_16)(trans_gray >= 0 ? trans_gray : 0);
        color.red = (png_uint_16)(trans_red >= 0 ? trans_red : 0);
        color.green = (png_uint_16)trans_green;
        color.blue = (png_uint_16)trans_blue;
        png_set_tRNS(png, info, trans_alpha, trans_count, &color);
    }
    rows = malloc(sizeof(png_bytep) * height);
    for (uint32_t y = 0; y < height; y++) rows[y] = (png_bytep)(samples + y * row_bytes);
    png_write_info(png, info);
    png_write_image(png, rows);
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    free(rows);
    *out = buffer.bytes;
    *out_length = buffer.length;
    return 0;
}

void test_png_free(void *pointer) { free(pointer); }
