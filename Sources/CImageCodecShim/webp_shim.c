// libwebp: status codes to iec_status and messages, and who owns which buffer. No decisions.
#include "CImageCodecShim.h"

#include <stdlib.h>
#include <string.h>

static iec_status iec_webp_status(VP8StatusCode code, const char *what, char message[IEC_MESSAGE_MAX]) {
    const char *reason;
    iec_status status = IEC_ERROR;
    switch (code) {
    case VP8_STATUS_OK:
        return IEC_OK;
    case VP8_STATUS_NOT_ENOUGH_DATA:
        reason = "the data ends before the image does";
        status = IEC_TRUNCATED;
        break;
    case VP8_STATUS_OUT_OF_MEMORY:
        reason = "out of memory";
        status = IEC_OUT_OF_MEMORY;
        break;
    case VP8_STATUS_UNSUPPORTED_FEATURE:
        reason = "unsupported feature";
        status = IEC_UNSUPPORTED;
        break;
    case VP8_STATUS_INVALID_PARAM:
        reason = "invalid parameter";
        break;
    case VP8_STATUS_SUSPENDED:
    case VP8_STATUS_USER_ABORT:
        reason = "aborted";
        break;
    case VP8_STATUS_BITSTREAM_ERROR:
    default:
        reason = "corrupt bitstream";
        break;
    }
    snprintf(message, IEC_MESSAGE_MAX, "libwebp %s: %s", what, reason);
    return status;
}

iec_status iec_webp_get_features(const uint8_t *data, size_t size, iec_webp_features *features,
                                 char message[IEC_MESSAGE_MAX]) {
    WebPBitstreamFeatures found;
    memset(features, 0, sizeof(*features));
    VP8StatusCode code = WebPGetFeatures(data, size, &found);
    if (code != VP8_STATUS_OK) return iec_webp_status(code, "header", message);
    features->width = found.width;
    features->height = found.height;
    features->has_alpha = found.has_alpha;
    features->has_animation = found.has_animation;
    features->format = found.format;
    return IEC_OK;
}

/// The first slice handed to the incremental decoder; each next one is a quarter of what it has,
/// so that a decoder which re-parses a header it could not finish (VP8L's) parses at most five
/// times the data in all, and the stop probe is still asked a dozen times or more per file.
#define IEC_WEBP_FIRST_SLICE ((size_t)16 * 1024)

iec_status iec_webp_decode(const uint8_t *data, size_t size, int channels, int width, int height,
                           uint8_t *output, size_t stride, iec_stop_probe stop, char message[IEC_MESSAGE_MAX]) {
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) {
        strncpy(message, "libwebp: version mismatch", IEC_MESSAGE_MAX);
        return IEC_ERROR;
    }
    VP8StatusCode code = WebPGetFeatures(data, size, &config.input);
    if (code != VP8_STATUS_OK) return iec_webp_status(code, "header", message);
    if (width != config.input.width || height != config.input.height) {
        config.options.use_scaling = 1;
        config.options.scaled_width = width;
        config.options.scaled_height = height;
    }
    config.output.colorspace = channels == 4 ? MODE_RGBA : MODE_RGB;
    config.output.is_external_memory = 1;
    config.output.u.RGBA.rgba = output;
    config.output.u.RGBA.stride = (int)stride;
    config.output.u.RGBA.size = stride * (size_t)height;
    // WebPIUpdate reads the caller's buffer where it is (WebPIAppend would copy it).
    WebPIDecoder *decoder = WebPIDecode(NULL, 0, &config);
    if (decoder == NULL) {
        strncpy(message, "libwebp decode: out of memory", IEC_MESSAGE_MAX);
        return IEC_OUT_OF_MEMORY;
    }
    size_t fed = 0;
    code = VP8_STATUS_SUSPENDED;
    while (code == VP8_STATUS_SUSPENDED) {
        if (stop != NULL && stop()) break;
        if (fed == size) {
            code = VP8_STATUS_NOT_ENOUGH_DATA;
            break;
        }
        size_t slice = fed / 4 > IEC_WEBP_FIRST_SLICE ? fed / 4 : IEC_WEBP_FIRST_SLICE;
        fed = size - fed > slice ? fed + slice : size;
        code = WebPIUpdate(decoder, data, fed);
    }
    WebPIDelete(decoder);
    // Frees nothing of ours (the output is external), only what libwebp attached to it.
    WebPFreeDecBuffer(&config.output);
    if (code == VP8_STATUS_SUSPENDED) {
        strncpy(message, "libwebp decode: stopped, its task was cancelled", IEC_MESSAGE_MAX);
        return IEC_CANCELLED;
    }
    return iec_webp_status(code, "decode", message);
}

/// libwebp's encoder progress hook: 0 aborts the encode (VP8_ENC_ERROR_USER_ABORT).
static int iec_webp_progress(int percent, const WebPPicture *picture) {
    (void)percent;
    const iec_webp_encode_params *params = picture->user_data;
    return params->stop == NULL || !params->stop();
}

static const char *iec_webp_encoding_error(WebPEncodingError error) {
    switch (error) {
    case VP8_ENC_ERROR_OUT_OF_MEMORY:
    case VP8_ENC_ERROR_BITSTREAM_OUT_OF_MEMORY:
        return "out of memory";
    case VP8_ENC_ERROR_BAD_DIMENSION:
        return "bad dimension (at most 16383 pixels a side)";
    case VP8_ENC_ERROR_PARTITION0_OVERFLOW:
    case VP8_ENC_ERROR_PARTITION_OVERFLOW:
        return "partition overflow";
    case VP8_ENC_ERROR_FILE_TOO_BIG:
        return "file too big";
    case VP8_ENC_ERROR_USER_ABORT:
        return "stopped, its task was cancelled";
    default:
        return "encoder error";
    }
}

iec_status iec_webp_encode(const iec_webp_encode_params *params, const uint8_t *pixels,
                           size_t bytes_per_row, uint8_t **output, size_t *output_length,
                           char message[IEC_MESSAGE_MAX]) {
    *output = NULL;
    *output_length = 0;
    WebPConfig config;
    WebPPicture picture;
    if (!WebPConfigInit(&config) || !WebPPictureInit(&picture)) {
        strncpy(message, "libwebp: version mismatch", IEC_MESSAGE_MAX);
        return IEC_ERROR;
    }
    config.quality = params->quality;
    config.method = params->method;
    config.use_sharp_yuv = params->sharp_yuv;
    if (!WebPValidateConfig(&config)) {
        strncpy(message, "libwebp: invalid encoder settings", IEC_MESSAGE_MAX);
        return IEC_ERROR;
    }
    // Imported as ARGB when sharp YUV is asked: libwebp converts an RGB import to YUV at once with
    // its plain conversion, and applies `use_sharp_yuv` only when WebPEncode does the conversion.
    picture.use_argb = params->sharp_yuv ? 1 : 0;
    picture.width = (int)params->width;
    picture.height = (int)params->height;
    int imported = params->channels == 4 ? WebPPictureImportRGBA(&picture, pixels, (int)bytes_per_row)
                                         : WebPPictureImportRGB(&picture, pixels, (int)bytes_per_row);
    if (!imported) {
        WebPPictureFree(&picture);
        snprintf(message, IEC_MESSAGE_MAX, "libwebp encode: %s", iec_webp_encoding_error(picture.error_code));
        return picture.error_code == VP8_ENC_ERROR_OUT_OF_MEMORY ? IEC_OUT_OF_MEMORY : IEC_ERROR;
    }
    WebPMemoryWriter writer;
    WebPMemoryWriterInit(&writer);
    picture.writer = WebPMemoryWrite;
    picture.custom_ptr = &writer;
    picture.progress_hook = iec_webp_progress;
    // Casting away const: libwebp hands it back to the hook untouched.
    picture.user_data = (void *)params;
    int encoded = WebPEncode(&config, &picture);
    WebPEncodingError error = picture.error_code;
    WebPPictureFree(&picture);
    if (!encoded) {
        WebPMemoryWriterClear(&writer);
        snprintf(message, IEC_MESSAGE_MAX, "libwebp encode: %s", iec_webp_encoding_error(error));
        if (error == VP8_ENC_ERROR_USER_ABORT) return IEC_CANCELLED;
        return error == VP8_ENC_ERROR_OUT_OF_MEMORY || error == VP8_ENC_ERROR_BITSTREAM_OUT_OF_MEMORY ? IEC_OUT_OF_MEMORY
                                                                                                      : IEC_ERROR;
    }
    // The writer's buffer belongs to libwebp's allocator: hand Swift a malloc'd copy it frees
    // like every other shim output (thumbnails are kilobytes, the copy is noise).
    *output = malloc(writer.size > 0 ? writer.size : 1);
    if (*output == NULL) {
        WebPMemoryWriterClear(&writer);
        strncpy(message, "libwebp encode: out of memory", IEC_MESSAGE_MAX);
        return IEC_OUT_OF_MEMORY;
    }
    memcpy(*output, writer.mem, writer.size);
    *output_length = writer.size;
    WebPMemoryWriterClear(&writer);
    return IEC_OK;
}

// MARK: Animation

struct iec_webp_animation {
    WebPAnimEncoder *encoder;
    WebPConfig config;
    int width;
    int height;
};

iec_webp_animation *iec_webp_animation_create(int width, int height, int loop_count,
                                              const iec_webp_encode_params *params,
                                              char message[IEC_MESSAGE_MAX]) {
    struct iec_webp_animation *animation = calloc(1, sizeof(*animation));
    if (animation == NULL) {
        strncpy(message, "libwebp animation: out of memory", IEC_MESSAGE_MAX);
        return NULL;
    }
    WebPAnimEncoderOptions options;
    if (!WebPAnimEncoderOptionsInit(&options) || !WebPConfigInit(&animation->config)) {
        strncpy(message, "libwebp: version mismatch", IEC_MESSAGE_MAX);
        free(animation);
        return NULL;
    }
    options.anim_params.loop_count = loop_count;
    // Every frame whole (a key frame): libwebp's lossy sub-frames treat pixels within a few
    // levels of the previous frame as unchanged (4 at quality 79), so a slow fade or a dimming
    // background drifts further from its source with every frame. Thumbnails are small: a
    // whole frame costs little more than a rectangle, and each frame is its source's.
    options.kmin = 0;
    options.kmax = 1;
    // Transparent where nothing is drawn, as the frames are composited.
    options.anim_params.bgcolor = 0x00000000;
    animation->config.quality = params->quality;
    animation->config.method = params->method;
    animation->config.use_sharp_yuv = params->sharp_yuv;
    if (!WebPValidateConfig(&animation->config)) {
        strncpy(message, "libwebp: invalid encoder settings", IEC_MESSAGE_MAX);
        free(animation);
        return NULL;
    }
    animation->encoder = WebPAnimEncoderNew(width, height, &options);
    if (animation->encoder == NULL) {
        strncpy(message, "libwebp animation: cannot start (size at most 16383 a side, or out of memory)", IEC_MESSAGE_MAX);
        free(animation);
        return NULL;
    }
    animation->width = width;
    animation->height = height;
    return animation;
}

iec_status iec_webp_animation_add(iec_webp_animation *animation, const uint8_t *pixels,
                                  size_t bytes_per_row, int timestamp_ms,
                                  char message[IEC_MESSAGE_MAX]) {
    WebPPicture picture;
    if (!WebPPictureInit(&picture)) {
        strncpy(message, "libwebp: version mismatch", IEC_MESSAGE_MAX);
        return IEC_ERROR;
    }
    // WebPAnimEncoder compares frames in ARGB.
    picture.use_argb = 1;
    picture.width = animation->width;
    picture.height = animation->height;
    if (!WebPPictureImportRGBA(&picture, pixels, (int)bytes_per_row)) {
        WebPPictureFree(&picture);
        snprintf(message, IEC_MESSAGE_MAX, "libwebp animation: %s", iec_webp_encoding_error(picture.error_code));
        return IEC_OUT_OF_MEMORY;
    }
    int added = WebPAnimEncoderAdd(animation->encoder, &picture, timestamp_ms, &animation->config);
    WebPPictureFree(&picture);
    if (!added) {
        const char *error = WebPAnimEncoderGetError(animation->encoder);
        snprintf(message, IEC_MESSAGE_MAX, "libwebp animation: %s", error != NULL && error[0] ? error : "cannot add the frame");
        return IEC_ERROR;
    }
    return IEC_OK;
}

iec_status iec_webp_animation_finish(iec_webp_animation *animation, int end_ms, uint8_t **output,
                                     size_t *output_length, char message[IEC_MESSAGE_MAX]) {
    *output = NULL;
    *output_length = 0;
    WebPData data;
    WebPDataInit(&data);
    if (!WebPAnimEncoderAdd(animation->encoder, NULL, end_ms, NULL) ||
        !WebPAnimEncoderAssemble(animation->encoder, &data)) {
        const char *error = WebPAnimEncoderGetError(animation->encoder);
        snprintf(message, IEC_MESSAGE_MAX, "libwebp animation: %s", error != NULL && error[0] ? error : "cannot assemble");
        WebPDataClear(&data);
        return IEC_ERROR;
    }
    // As for stills: a malloc'd copy Swift frees like every shim output.
    *output = malloc(data.size > 0 ? data.size : 1);
    if (*output == NULL) {
        WebPDataClear(&data);
        strncpy(message, "libwebp animation: out of memory", IEC_MESSAGE_MAX);
        return IEC_OUT_OF_MEMORY;
    }
    memcpy(*output, data.bytes, data.size);
    *output_length = data.size;
    WebPDataClear(&data);
    return IEC_OK;
}

void iec_webp_animation_free(iec_webp_animation *animation) {
    if (animation == NULL) return;
    WebPAnimEncoderDelete(animation->encoder);
    free(animation);
}
