// libheif (HEIC in): heif_error to iec_status and messages, and the lifetimes of its context,
// handle and decoded image. No decisions.
#include "CImageCodecShim.h"

#include <stdlib.h>
#include <string.h>

struct iec_heif_reader {
    struct heif_context *context;
    struct heif_image_handle *handle;
    struct heif_image *image;
};

static iec_status iec_heif_status(struct heif_error error, const char *what, char message[IEC_MESSAGE_MAX]) {
    if (error.code == heif_error_Ok) return IEC_OK;
    snprintf(message, IEC_MESSAGE_MAX, "libheif %s: %s", what, error.message != NULL ? error.message : "error");
    // A security limit comes with several codes (memory allocation, invalid input): a limit first.
    if (error.subcode == heif_suberror_Security_limit_exceeded) return IEC_LIMIT_EXCEEDED;
    switch (error.code) {
    case heif_error_Memory_allocation_error:
        return IEC_OUT_OF_MEMORY;
    case heif_error_Unsupported_feature:
    case heif_error_Unsupported_filetype:
        // A missing codec or a feature libheif lacks: not this build.
        return IEC_UNSUPPORTED;
    case heif_error_Decoder_plugin_error:
        // The codec (libde265, libaom) rejected the bitstream: damage.
        return IEC_ERROR;
    case heif_error_Invalid_input:
        return error.subcode == heif_suberror_End_of_data ? IEC_TRUNCATED : IEC_ERROR;
    default:
        return IEC_ERROR;
    }
}

void iec_heif_reader_destroy(iec_heif_reader *reader) {
    if (reader == NULL) return;
    if (reader->image != NULL) heif_image_release(reader->image);
    if (reader->handle != NULL) heif_image_handle_release(reader->handle);
    if (reader->context != NULL) heif_context_free(reader->context);
    free(reader);
}

iec_heif_reader *iec_heif_reader_create(const uint8_t *data, size_t size, int max_side, iec_status *status,
                                        char message[IEC_MESSAGE_MAX]) {
    iec_heif_reader *reader = calloc(1, sizeof(iec_heif_reader));
    if (reader == NULL || (reader->context = heif_context_alloc()) == NULL) {
        free(reader);
        strncpy(message, "libheif: out of memory", IEC_MESSAGE_MAX);
        *status = IEC_OUT_OF_MEMORY;
        return NULL;
    }
    heif_context_set_maximum_image_size_limit(reader->context, max_side);
    // Decodes run one per worker already: libheif's own tile threads would oversubscribe.
    heif_context_set_max_decoding_threads(reader->context, 0);
    // In place: the caller keeps `data` alive and unmoved while libheif reads it (here and in
    // each decode), which spares a copy of the whole file.
    *status = iec_heif_status(heif_context_read_from_memory_without_copy(reader->context, data, size, NULL), "read", message);
    if (*status == IEC_OK) {
        *status = iec_heif_status(heif_context_get_primary_image_handle(reader->context, &reader->handle), "primary image", message);
    }
    if (*status != IEC_OK) {
        iec_heif_reader_destroy(reader);
        return NULL;
    }
    return reader;
}

void iec_heif_reader_info(const iec_heif_reader *reader, iec_heif_info *info) {
    memset(info, 0, sizeof(*info));
    const struct heif_image_handle *handle = reader->handle;
    info->width = heif_image_handle_get_width(handle);
    info->height = heif_image_handle_get_height(handle);
    info->has_alpha = heif_image_handle_has_alpha_channel(handle);
    info->premultiplied_alpha = heif_image_handle_is_premultiplied_alpha(handle);
    info->luma_bits = heif_image_handle_get_luma_bits_per_pixel(handle);
    info->image_count = heif_context_get_number_of_top_level_images(reader->context);
    enum heif_color_profile_type type = heif_image_handle_get_color_profile_type(handle);
    struct heif_color_profile_nclx *nclx = NULL;
    if (heif_image_handle_get_nclx_color_profile(handle, &nclx).code == heif_error_Ok && nclx != NULL) {
        info->has_nclx = 1;
        info->nclx_primaries = (int)nclx->color_primaries;
        info->nclx_transfer = (int)nclx->transfer_characteristics;
        info->nclx_matrix = (int)nclx->matrix_coefficients;
        info->nclx_full_range = nclx->full_range_flag != 0;
    }
    // libheif 1.15 hands out the profile even when it reports invalid coefficients.
    if (nclx != NULL) heif_nclx_color_profile_free(nclx);
    if (type == heif_color_profile_type_prof || type == heif_color_profile_type_rICC) {
        info->profile_kind = 1;
    } else if (type == heif_color_profile_type_nclx && info->has_nclx) {
        info->profile_kind = 2;
    }
}

/// One decode into reader->image in the given layout, its warnings counted (the first one's
/// codes left in `message`).
static iec_status iec_heif_decode(iec_heif_reader *reader, enum heif_colorspace colorspace, enum heif_chroma chroma,
                                  int max_side, int *warnings, char message[IEC_MESSAGE_MAX]) {
    *warnings = 0;
    heif_context_set_maximum_image_size_limit(reader->context, max_side);
    if (reader->image != NULL) {
        heif_image_release(reader->image);
        reader->image = NULL;
    }
    struct heif_decoding_options *options = heif_decoding_options_alloc();
    if (options == NULL) {
        strncpy(message, "libheif: out of memory", IEC_MESSAGE_MAX);
        return IEC_OUT_OF_MEMORY;
    }
    options->convert_hdr_to_8bit = 1;
    // Lenient: libheif 1.15's strict mode returns early on, e.g., unknown nclx primaries without
    // closing its dav1d decoder (70 KB leaked per file, found by heif-decode). The warnings it
    // records instead are handed to Swift, which refuses them unless partial images are allowed.
    options->strict_decoding = 0;
    struct heif_error error = heif_decode_image(reader->handle, &reader->image, colorspace, chroma, options);
    heif_decoding_options_free(options);
    iec_status status = iec_heif_status(error, "decode", message);
    if (status != IEC_OK) return status;
    struct heif_error warning;
    *warnings = heif_image_get_decoding_warnings(reader->image, 0, &warning, 1);
    // Only the codes: a warning's message points into storage libheif may already have freed
    // (heif-decode found the use after free).
    if (*warnings > 0) {
        snprintf(message, IEC_MESSAGE_MAX, "libheif decode: the decoder papered over damage (error %d, suberror %d)",
                 (int)warning.code, (int)warning.subcode);
    }
    return IEC_OK;
}

iec_status iec_heif_reader_decode(iec_heif_reader *reader, int channels, int max_side,
                                  const uint8_t **pixels, size_t *stride, int *width, int *height, int *warnings,
                                  char message[IEC_MESSAGE_MAX]) {
    *pixels = NULL;
    iec_status status = iec_heif_decode(reader, heif_colorspace_RGB,
                                        channels == 4 ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB,
                                        max_side, warnings, message);
    if (status != IEC_OK) return status;
    int row_bytes = 0;
    *pixels = heif_image_get_plane_readonly(reader->image, heif_channel_interleaved, &row_bytes);
    *width = heif_image_get_width(reader->image, heif_channel_interleaved);
    *height = heif_image_get_height(reader->image, heif_channel_interleaved);
    *stride = (size_t)row_bytes;
    if (*pixels == NULL || row_bytes < *width * channels) {
        strncpy(message, "libheif: the decoded image has no interleaved plane", IEC_MESSAGE_MAX);
        return IEC_ERROR;
    }
    return IEC_OK;
}

iec_status iec_heif_reader_decode_planes(iec_heif_reader *reader, int chroma, int max_side, iec_heif_planes *planes,
                                         int *warnings, char message[IEC_MESSAGE_MAX]) {
    memset(planes, 0, sizeof(*planes));
    enum heif_chroma layout = chroma == 1 ? heif_chroma_420 : heif_chroma_444;
    iec_status status = iec_heif_decode(reader, heif_colorspace_YCbCr, layout, max_side, warnings, message);
    if (status != IEC_OK) return status;
    const struct heif_image *image = reader->image;
    int strides[3] = {0, 0, 0};
    planes->y = heif_image_get_plane_readonly(image, heif_channel_Y, &strides[0]);
    planes->cb = heif_image_get_plane_readonly(image, heif_channel_Cb, &strides[1]);
    planes->cr = heif_image_get_plane_readonly(image, heif_channel_Cr, &strides[2]);
    planes->y_stride = (size_t)strides[0];
    planes->cb_stride = (size_t)strides[1];
    planes->cr_stride = (size_t)strides[2];
    planes->width = heif_image_get_width(image, heif_channel_Y);
    planes->height = heif_image_get_height(image, heif_channel_Y);
    planes->chroma_width = heif_image_get_width(image, heif_channel_Cb);
    planes->chroma_height = heif_image_get_height(image, heif_channel_Cb);
    int deep = heif_image_get_bits_per_pixel(image, heif_channel_Y) != 8 || heif_image_get_bits_per_pixel(image, heif_channel_Cb) != 8 ||
               heif_image_get_bits_per_pixel(image, heif_channel_Cr) != 8;
    if (planes->y == NULL || planes->cb == NULL || planes->cr == NULL || deep ||
        heif_image_get_width(image, heif_channel_Cr) != planes->chroma_width ||
        heif_image_get_height(image, heif_channel_Cr) != planes->chroma_height) {
        strncpy(message, "libheif: the decoded image lacks the 8-bit Y, Cb and Cr planes asked for", IEC_MESSAGE_MAX);
        return IEC_ERROR;
    }
    return IEC_OK;
}
