// libpng error callbacks, memory source/destination and call wrappers. See CImageCodecShim.h.
#include "CImageCodecShim.h"
#include "memory_budget.h"

#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

/// Per-call error state, reached through libpng's error pointer.
typedef struct {
    char message[IEC_MESSAGE_MAX];
    int warnings;
    iec_status status;
    /// Set when the counting allocator refused a block for the decoder's ceiling.
    int limit_hit;
    /// The first IEC_WARNINGS_MAX warnings, for the decode result.
    int recorded;
    char warning_messages[IEC_WARNINGS_MAX][IEC_MESSAGE_MAX];
} iec_png_error;

static void iec_png_record(iec_png_error *error, const char *text, iec_status status) {
    strncpy(error->message, text != NULL ? text : "libpng error", IEC_MESSAGE_MAX - 1);
    error->message[IEC_MESSAGE_MAX - 1] = '\0';
    error->status = status;
}

static void iec_png_error_fn(png_structp png, png_const_charp text) {
    iec_png_error *error = (iec_png_error *)png_get_error_ptr(png);
    // A read callback that ran dry has already recorded a truncation; keep that diagnosis.
    if (error->status != IEC_TRUNCATED) {
        int oom = text != NULL && strstr(text, "memory") != NULL;
        if (oom && error->limit_hit) {
            iec_png_record(error, "libpng needed more memory than the decode's ceiling", IEC_LIMIT_EXCEEDED);
        } else {
            iec_png_record(error, text, oom ? IEC_OUT_OF_MEMORY : IEC_ERROR);
        }
    }
    png_longjmp(png, 1);
}

static void iec_png_warning_fn(png_structp png, png_const_charp text) {
    (void)text;
    iec_png_error *error = (iec_png_error *)png_get_error_ptr(png);
    error->warnings += 1;
    if (error->recorded < IEC_WARNINGS_MAX) {
        strncpy(error->warning_messages[error->recorded], text != NULL ? text : "libpng warning", IEC_MESSAGE_MAX - 1);
        error->warning_messages[error->recorded][IEC_MESSAGE_MAX - 1] = '\0';
        error->recorded += 1;
    }
}

// MARK: - Decoder

struct iec_png_decoder {
    png_structp png;
    png_infop info;
    const uint8_t *data;
    size_t size;
    size_t offset;
    iec_png_error error;
    iec_memory_usage memory;
};

/// libpng's allocator for one decoder (zlib's inflate state included: libpng allocates it
/// through here): each block carries its size in front, so the counter can release it.
#define IEC_PNG_BLOCK_HEADER 16

static png_voidp iec_png_malloc(png_structp png, png_alloc_size_t size) {
    iec_png_decoder *decoder = (iec_png_decoder *)png_get_mem_ptr(png);
    if (size > SIZE_MAX - IEC_PNG_BLOCK_HEADER || !iec_memory_reserve(&decoder->memory, size)) {
        decoder->error.limit_hit = 1;
        return NULL;
    }
    uint8_t *block = malloc(size + IEC_PNG_BLOCK_HEADER);
    if (block == NULL) {
        iec_memory_release(&decoder->memory, size);
        return NULL;
    }
    memcpy(block, &size, sizeof size);
    return block + IEC_PNG_BLOCK_HEADER;
}

static void iec_png_free(png_structp png, png_voidp pointer) {
    if (pointer == NULL) return;
    iec_png_decoder *decoder = (iec_png_decoder *)png_get_mem_ptr(png);
    uint8_t *block = (uint8_t *)pointer - IEC_PNG_BLOCK_HEADER;
    size_t size;
    memcpy(&size, block, sizeof size);
    iec_memory_release(&decoder->memory, size);
    free(block);
}

static void iec_png_read_fn(png_structp png, png_bytep out, size_t length) {
    iec_png_decoder *decoder = (iec_png_decoder *)png_get_io_ptr(png);
    if (length > decoder->size - decoder->offset) {
        iec_png_record(&decoder->error, "PNG data ends before the image does", IEC_TRUNCATED);
        png_error(png, "PNG data ends before the image does");
    }
    memcpy(out, decoder->data + decoder->offset, length);
    decoder->offset += length;
}

iec_png_decoder *iec_png_decoder_create(const uint8_t *data, size_t size, size_t max_icc_bytes) {
    iec_png_decoder *decoder = calloc(1, sizeof(iec_png_decoder));
    if (decoder == NULL) return NULL;
    decoder->data = data;
    decoder->size = size;
    decoder->png = png_create_read_struct_2(PNG_LIBPNG_VER_STRING, &decoder->error, iec_png_error_fn,
                                            iec_png_warning_fn, decoder, iec_png_malloc, iec_png_free);
    if (decoder->png == NULL) {
        iec_png_record(&decoder->error, "Cannot create libpng reader", IEC_OUT_OF_MEMORY);
        return decoder;
    }
    if (setjmp(png_jmpbuf(decoder->png))) return decoder;
    decoder->info = png_create_info_struct(decoder->png);
    if (decoder->info == NULL) {
        iec_png_record(&decoder->error, "Cannot create libpng info", IEC_OUT_OF_MEMORY);
        return decoder;
    }
    // The engine applies its own pixel-count limit right after the header, with a typed error;
    // libpng's default 1,000,000-pixel side limit would pre-empt it with an untyped one.
    png_set_user_limits(decoder->png, 0x7fffffff, 0x7fffffff);
    // Only what the engine uses is read: IHDR, PLTE, tRNS, IDAT, IEND and iCCP. Every other
    // chunk (text, sPLT, hIST, eXIf, which the Swift side reads in place, unknown and private
    // ones) is skipped with its CRC checked: never inflated, never stored, so a few hundred KB of
    // zTXt cannot make gigabytes. The iCCP profile is inflated only when its declared size is
    // within max_icc_bytes (libpng checks that before allocating); a larger one is dropped with
    // a benign error (a warning here), and the image is read as sRGB. The same ceiling makes any
    // other chunk over it a warning (libpng's "chunk data is too large"), which a skipped chunk
    // may be.
    png_set_keep_unknown_chunks(decoder->png, PNG_HANDLE_CHUNK_NEVER, NULL, -1);
    static const png_byte used[] = {'i', 'C', 'C', 'P', '\0'};
    png_set_keep_unknown_chunks(decoder->png, PNG_HANDLE_CHUNK_AS_DEFAULT, used, 1);
    png_set_chunk_malloc_max(decoder->png, max_icc_bytes);
    png_set_read_fn(decoder->png, decoder, iec_png_read_fn);
#if defined(PNG_IGNORE_ADLER32)
    // Every IDAT chunk's CRC still guards the compressed bytes; zlib's Adler-32 over the
    // inflated ones only re-checks the encoder (5% of a large PNG's decode; browsers skip it too).
    png_set_option(decoder->png, PNG_IGNORE_ADLER32, PNG_OPTION_ON);
#endif
    return decoder;
}

void iec_png_decoder_rebase(iec_png_decoder *decoder, const uint8_t *data, size_t size) {
    decoder->data = data;
    decoder->size = size;
}

iec_memory_usage iec_png_decoder_memory(const iec_png_decoder *decoder) { return decoder->memory; }

void iec_png_decoder_set_memory_limit(iec_png_decoder *decoder, size_t limit) {
    decoder->memory.limit = limit;
    decoder->memory.peak = decoder->memory.current;
}

int iec_png_decoder_recorded_warnings(const iec_png_decoder *decoder) { return decoder->error.recorded; }

const char *iec_png_decoder_warning_message(const iec_png_decoder *decoder, int index) {
    return index >= 0 && index < decoder->error.recorded ? decoder->error.warning_messages[index] : "";
}

void iec_png_decoder_destroy(iec_png_decoder *decoder) {
    if (decoder == NULL) return;
    if (decoder->png != NULL) {
        png_destroy_read_struct(&decoder->png, decoder->info != NULL ? &decoder->info : NULL, NULL);
    }
    free(decoder);
}

const char *iec_png_decoder_message(const iec_png_decoder *decoder) { return decoder->error.message; }

int iec_png_decoder_warning_count(const iec_png_decoder *decoder) { return decoder->error.warnings; }

iec_status iec_png_decoder_status(const iec_png_decoder *decoder) { return decoder->error.status; }

iec_status iec_png_read_header(iec_png_decoder *decoder, iec_png_header *header) {
    memset(header, 0, sizeof(*header));
    if (decoder->error.status != IEC_OK) return decoder->error.status;
    if (setjmp(png_jmpbuf(decoder->png))) return decoder->error.status;
    png_read_info(decoder->png, decoder->info);
    png_uint_32 width = 0, height = 0;
    int bit_depth = 0, color_type = 0, interlace = 0;
    png_get_IHDR(decoder->png, decoder->info, &width, &height, &bit_depth, &color_type, &interlace,
                 NULL, NULL);
    header->width = width;
    header->height = height;
    header->bit_depth = bit_depth;
    header->color_type = color_type;
    header->interlaced = interlace != PNG_INTERLACE_NONE;
    header->has_transparency_chunk = png_get_valid(decoder->png, decoder->info, PNG_INFO_tRNS) != 0;
    png_charp name = NULL;
    int compression = 0;
    png_bytep profile = NULL;
    png_uint_32 profile_length = 0;
    if (png_get_iCCP(decoder->png, decoder->info, &name, &compression, &profile, &profile_length)) {
        header->icc_profile = profile;
        header->icc_length = profile_length;
    }
    return IEC_OK;
}

iec_status iec_png_configure_8bit(iec_png_decoder *decoder, iec_png_output *output) {
    memset(output, 0, sizeof(*output));
    if (setjmp(png_jmpbuf(decoder->png))) return decoder->error.status;
    png_structp png = decoder->png;
    png_infop info = decoder->info;
    int color_type = png_get_color_type(png, info);
    if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color_type == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(png, info) < 8) {
        png_set_expand_gray_1_2_4_to_8(png);
    }
    if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
    // Scale (not strip) so 0xFFFF maps to 0xFF and rounding is correct.
    if (png_get_bit_depth(png, info) == 16) png_set_scale_16(png);
    output->passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    output->channels = png_get_channels(png, info);
    output->row_bytes = png_get_rowbytes(png, info);
    return IEC_OK;
}

iec_status iec_png_read_rows(iec_png_decoder *decoder, uint8_t **rows, uint32_t count) {
    if (setjmp(png_jmpbuf(decoder->png))) return decoder->error.status;
    png_read_rows(decoder->png, rows, NULL, count);
    return IEC_OK;
}

iec_status iec_png_read_end(iec_png_decoder *decoder) {
    if (setjmp(png_jmpbuf(decoder->png))) return decoder->error.status;
    png_read_end(decoder->png, NULL);
    return IEC_OK;
}

// MARK: - Encoder

/// Growable memory destination for png_set_write_fn.
typedef struct {
    uint8_t *bytes;
    size_t length;
    size_t capacity;
    size_t limit;
} iec_png_buffer;

static void iec_png_write_fn(png_structp png, png_bytep data, size_t length) {
    iec_png_buffer *buffer = (iec_png_buffer *)png_get_io_ptr(png);
    if (length > SIZE_MAX - buffer->length) png_error(png, "Out of memory: PNG output too large");
    size_t needed = buffer->length + length;
    if (needed > buffer->limit) png_error(png, "Out of memory: PNG output over its limit");
    if (needed > buffer->capacity) {
        size_t capacity = buffer->capacity < 4096 ? 4096 : buffer->capacity;
        while (capacity < needed) capacity = capacity > SIZE_MAX / 2 ? needed : capacity * 2;
        // On failure the old buffer stays in `buffer` and is freed once, after the longjmp.
        uint8_t *grown = realloc(buffer->bytes, capacity);
        if (grown == NULL) png_error(png, "Out of memory for PNG output");
        buffer->bytes = grown;
        buffer->capacity = capacity;
    }
    memcpy(buffer->bytes + buffer->length, data, length);
    buffer->length = needed;
}

static void iec_png_flush_fn(png_structp png) { (void)png; }

iec_status iec_png_encode(const iec_png_encode_params *params, const uint8_t *pixels,
                          size_t bytes_per_row, uint8_t **output, size_t *output_length,
                          char message[IEC_MESSAGE_MAX]) {
    iec_png_error error;
    memset(&error, 0, sizeof(error));
    // Read after a longjmp: volatile, so never a stale register copy.
    volatile iec_png_buffer buffer = {NULL, 0, 0, params->max_output_bytes > 0 ? params->max_output_bytes : SIZE_MAX};
    *output = NULL;
    *output_length = 0;
    // Both are created before setjmp (neither longjmps), so they are unchanged after a longjmp.
    png_structp png =
        png_create_write_struct(PNG_LIBPNG_VER_STRING, &error, iec_png_error_fn, iec_png_warning_fn);
    png_infop info = png != NULL ? png_create_info_struct(png) : NULL;
    if (png == NULL || info == NULL) {
        png_destroy_write_struct(&png, NULL);
        strncpy(message, "Cannot create libpng writer (out of memory)", IEC_MESSAGE_MAX);
        return IEC_OUT_OF_MEMORY;
    }
    if (setjmp(png_jmpbuf(png))) {
        strncpy(message, error.message, IEC_MESSAGE_MAX);
        png_destroy_write_struct(&png, &info);
        free(buffer.bytes);
        return error.status == IEC_OK ? IEC_ERROR : error.status;
    }
    // An ICC profile libpng distrusts (malformed, or a known-bad sRGB variant found in many
    // camera files) is dropped with a warning instead of failing the whole encode.
    png_set_benign_errors(png, 1);
    // libpng refuses sides over 1,000,000 by default; the engine's own limits (pixel count and
    // side, as for decoding) were checked before, so whatever decodes can be encoded.
    png_set_user_limits(png, 0x7fffffff, 0x7fffffff);
    png_set_write_fn(png, (void *)&buffer, iec_png_write_fn, iec_png_flush_fn);
    png_set_compression_level(png, params->compression_level);
    png_set_IHDR(png, info, params->width, params->height, 8, params->color_type,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (params->icc_profile != NULL && params->icc_length > 0) {
        png_set_iCCP(png, info, "icc", PNG_COMPRESSION_TYPE_BASE, params->icc_profile,
                     params->icc_length);
    }
    png_write_info(png, info);
    // Row by row rather than png_write_image, so that the stop probe is asked between rows.
    for (uint32_t y = 0; y < params->height; y++) {
        if (params->stop != NULL && params->stop()) {
            iec_png_record(&error, "Stopped: its task was cancelled", IEC_CANCELLED);
            png_longjmp(png, 1);
        }
        png_write_row(png, (png_const_bytep)(pixels + (size_t)y * bytes_per_row));
    }
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    *output = buffer.bytes;
    *output_length = buffer.length;
    return IEC_OK;
}
