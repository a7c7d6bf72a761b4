// libavif (AVIF in and out): avifResult to iec_status and messages, the decoder's and encoder's
// settings and lifetimes, and the images they convert between. No decisions: the limits, the
// transformations, the colour and the encoder's settings are Swift's.
#include "CImageCodecShim.h"

#include <stdlib.h>
#include <string.h>

struct iec_avif_reader {
    avifDecoder *decoder;
    avifRGBImage rgb;
};

static iec_status iec_avif_status(avifResult result, const avifDiagnostics *diag, const char *what,
                                  char message[IEC_MESSAGE_MAX]) {
    if (result == AVIF_RESULT_OK) return IEC_OK;
    const char *detail = diag != NULL && diag->error[0] != '\0' ? diag->error : "";
    snprintf(message, IEC_MESSAGE_MAX, "libavif %s: %s%s%s", what, avifResultToString(result), detail[0] ? ": " : "", detail);
    switch (result) {
    case AVIF_RESULT_TRUNCATED_DATA:
        return IEC_TRUNCATED;
    case AVIF_RESULT_OUT_OF_MEMORY:
        return IEC_OUT_OF_MEMORY;
    case AVIF_RESULT_NO_CODEC_AVAILABLE:
    case AVIF_RESULT_NOT_IMPLEMENTED:
    case AVIF_RESULT_UNSUPPORTED_DEPTH:
        return IEC_UNSUPPORTED;
    default:
        // Parse failures, a grid that does not add up, a bitstream dav1d rejects: damage. The
        // size limits are checked in Swift before libavif is asked to decode.
        return IEC_ERROR;
    }
}

void iec_avif_reader_destroy(iec_avif_reader *reader) {
    if (reader == NULL) return;
    avifRGBImageFreePixels(&reader->rgb);
    if (reader->decoder != NULL) avifDecoderDestroy(reader->decoder);
    free(reader);
}

iec_avif_reader *iec_avif_reader_create(const uint8_t *data, size_t size, uint32_t max_pixels, uint32_t max_side,
                                        iec_status *status, char message[IEC_MESSAGE_MAX]) {
    iec_avif_reader *reader = calloc(1, sizeof(iec_avif_reader));
    if (reader == NULL || (reader->decoder = avifDecoderCreate()) == NULL) {
        free(reader);
        strncpy(message, "libavif: out of memory", IEC_MESSAGE_MAX);
        *status = IEC_OUT_OF_MEMORY;
        return NULL;
    }
    avifDecoder *decoder = reader->decoder;
    // dav1d decodes; libaom's decoder is never used (it holds two-byte samples).
    decoder->codecChoice = AVIF_CODEC_CHOICE_DAV1D;
    // Decodes run one per worker already: dav1d's own threads would oversubscribe.
    decoder->maxThreads = 1;
    // The still image the file names as primary, as for HEIC: never an image sequence's track.
    decoder->requestedSource = AVIF_DECODER_SOURCE_PRIMARY_ITEM;
    decoder->imageSizeLimit = max_pixels;
    decoder->imageDimensionLimit = max_side;
    decoder->imageCountLimit = 1;
    // The metadata is read by the engine's own container walk, never through libavif.
    decoder->ignoreExif = AVIF_TRUE;
    decoder->ignoreXMP = AVIF_TRUE;
    *status = iec_avif_status(avifDecoderSetIOMemory(decoder, data, size), &decoder->diag, "input", message);
    if (*status == IEC_OK) *status = iec_avif_status(avifDecoderParse(decoder), &decoder->diag, "parse", message);
    if (*status != IEC_OK) {
        iec_avif_reader_destroy(reader);
        return NULL;
    }
    return reader;
}

void iec_avif_reader_info(const iec_avif_reader *reader, iec_avif_info *info) {
    memset(info, 0, sizeof(*info));
    const avifImage *image = reader->decoder->image;
    info->width = image->width;
    info->height = image->height;
    info->depth = (int)image->depth;
    info->yuv_format = (int)image->yuvFormat;
    info->has_alpha = reader->decoder->alphaPresent ? 1 : 0;
    info->has_icc = image->icc.size > 0 ? 1 : 0;
    info->color_primaries = (int)image->colorPrimaries;
    info->transfer_characteristics = (int)image->transferCharacteristics;
    info->rotation = (image->transformFlags & AVIF_TRANSFORM_IROT) ? (int)image->irot.angle : 0;
    info->mirror = (image->transformFlags & AVIF_TRANSFORM_IMIR) ? (int)image->imir.mode : -1;
    info->crop_width = image->width;
    info->crop_height = image->height;
    info->crop_valid = 1;
    if (image->transformFlags & AVIF_TRANSFORM_CLAP) {
        avifCropRect rect;
        avifDiagnostics diag;
        avifDiagnosticsClearError(&diag);
        if (avifCropRectConvertCleanApertureBox(&rect, &image->clap, image->width, image->height, image->yuvFormat, &diag)) {
            info->crop_x = rect.x;
            info->crop_y = rect.y;
            info->crop_width = rect.width;
            info->crop_height = rect.height;
        } else {
            info->crop_valid = 0;
        }
    }
}

iec_status iec_avif_reader_decode(iec_avif_reader *reader, int channels, const uint8_t **pixels, size_t *stride,
                                  char message[IEC_MESSAGE_MAX]) {
    *pixels = NULL;
    *stride = 0;
    avifDecoder *decoder = reader->decoder;
    iec_status status = iec_avif_status(avifDecoderNextImage(decoder), &decoder->diag, "decode", message);
    if (status != IEC_OK) return status;
    avifRGBImageFreePixels(&reader->rgb);
    avifRGBImageSetDefaults(&reader->rgb, decoder->image);
    reader->rgb.format = channels == 4 ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB;
    reader->rgb.depth = 8;
    // Straight alpha out, whatever the file stores: libavif divides a premultiplied image.
    reader->rgb.alphaPremultiplied = AVIF_FALSE;
    avifRGBImageAllocatePixels(&reader->rgb);
    if (reader->rgb.pixels == NULL) {
        strncpy(message, "libavif: out of memory", IEC_MESSAGE_MAX);
        return IEC_OUT_OF_MEMORY;
    }
    status = iec_avif_status(avifImageYUVToRGB(decoder->image, &reader->rgb), &decoder->diag, "YUV to RGB", message);
    if (status != IEC_OK) return status;
    *pixels = reader->rgb.pixels;
    *stride = reader->rgb.rowBytes;
    return IEC_OK;
}

iec_status iec_avif_encode(const iec_avif_encode_params *params, const uint8_t *pixels, size_t bytes_per_row,
                           uint8_t **output, size_t *output_length, char message[IEC_MESSAGE_MAX]) {
    *output = NULL;
    *output_length = 0;
    avifImage *image = avifImageCreate(params->width, params->height, 8, AVIF_PIXEL_FORMAT_YUV420);
    avifEncoder *encoder = avifEncoderCreate();
    avifRWData written = AVIF_DATA_EMPTY;
    if (image == NULL || encoder == NULL) {
        if (image != NULL) avifImageDestroy(image);
        if (encoder != NULL) avifEncoderDestroy(encoder);
        strncpy(message, "libavif: out of memory", IEC_MESSAGE_MAX);
        return IEC_OUT_OF_MEMORY;
    }
    // sRGB's primaries and curve, BT.601 coefficients, full range, as JPEG's YCbCr.
    image->colorPrimaries = AVIF_COLOR_PRIMARIES_BT709;
    image->transferCharacteristics = AVIF_TRANSFER_CHARACTERISTICS_SRGB;
    image->matrixCoefficients = AVIF_MATRIX_COEFFICIENTS_BT601;
    image->yuvRange = AVIF_RANGE_FULL;
    if (params->icc_profile != NULL && params->icc_length > 0) avifImageSetProfileICC(image, params->icc_profile, params->icc_length);
    if (params->exif != NULL && params->exif_length > 0) {
        avifImageSetMetadataExif(image, params->exif, params->exif_length);
        // libavif turns the block's orientation into irot/imir: the pixels are upright already.
        image->transformFlags = AVIF_TRANSFORM_NONE;
    }
    avifRGBImage rgb;
    avifRGBImageSetDefaults(&rgb, image);
    rgb.format = params->channels == 4 ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB;
    rgb.depth = 8;
    rgb.alphaPremultiplied = AVIF_FALSE;
    rgb.pixels = (uint8_t *)pixels;
    rgb.rowBytes = (uint32_t)bytes_per_row;
    iec_status status = iec_avif_status(avifImageRGBToYUV(image, &rgb), NULL, "RGB to YUV", message);
    if (status == IEC_OK) {
        encoder->codecChoice = AVIF_CODEC_CHOICE_AOM;
        // Encodes run one per worker already.
        encoder->maxThreads = 1;
        encoder->speed = params->speed;
        encoder->minQuantizer = params->min_quantizer;
        encoder->maxQuantizer = params->max_quantizer;
        encoder->minQuantizerAlpha = params->min_quantizer;
        encoder->maxQuantizerAlpha = params->max_quantizer;
        char level[8];
        snprintf(level, sizeof(level), "%d", params->cq_level);
        avifEncoderSetCodecSpecificOption(encoder, "end-usage", "q");
        avifEncoderSetCodecSpecificOption(encoder, "cq-level", level);
        avifEncoderSetCodecSpecificOption(encoder, "tune", params->tune_ssim ? "ssim" : "psnr");
        // libaom takes a smooth gradient at 4:2:0 for screen content and searches intra block
        // copy: 10 times the time and 40 MB more for a 512 px sky, for nothing a photo gains.
        if (!params->intra_block_copy) avifEncoderSetCodecSpecificOption(encoder, "enable-intrabc", "0");
        status = iec_avif_status(avifEncoderAddImage(encoder, image, 1, AVIF_ADD_IMAGE_FLAG_SINGLE), &encoder->diag, "encode", message);
    }
    if (status == IEC_OK) status = iec_avif_status(avifEncoderFinish(encoder, &written), &encoder->diag, "write", message);
    if (status == IEC_OK) {
        *output = malloc(written.size);
        if (*output == NULL) {
            strncpy(message, "libavif: out of memory", IEC_MESSAGE_MAX);
            status = IEC_OUT_OF_MEMORY;
        } else {
            memcpy(*output, written.data, written.size);
            *output_length = written.size;
        }
    }
    avifRWDataFree(&written);
    avifEncoderDestroy(encoder);
    avifImageDestroy(image);
    return status;
}
