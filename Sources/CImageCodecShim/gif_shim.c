// giflib: one frame's LZW data in, rows of palette indices out, status codes and messages.
// No decisions: the block walk, the limits, palettes, transparency and compositing are Swift's.
#include "CImageCodecShim.h"

#include <stdlib.h>
#include <string.h>

/// The stream giflib reads: a 23-byte preamble made here (signature, a screen and an image
/// descriptor of the frame's size, neither with a colour table), then the frame's own data,
/// then the trailer. giflib never sees the file's other blocks.
#define IEC_GIF_PREAMBLE 23

struct iec_gif_frame {
    GifFileType *gif;
    uint8_t preamble[IEC_GIF_PREAMBLE];
    const uint8_t *data;
    size_t size;
    /// Bytes of preamble + data + trailer handed to giflib so far.
    size_t offset;
    int width;
    int check_overrun;
};

static int iec_gif_read(GifFileType *gif, GifByteType *buffer, int count) {
    struct iec_gif_frame *frame = gif->UserData;
    static const uint8_t trailer = 0x3B;
    // The three parts one after another: what is left of the one `offset` is in, then the next.
    const uint8_t *parts[3] = {frame->preamble, frame->data, &trailer};
    const size_t sizes[3] = {IEC_GIF_PREAMBLE, frame->size, 1};
    size_t copied = 0, start = 0;
    for (int part = 0; part < 3 && copied < (size_t)count; part++) {
        size_t end = start + sizes[part];
        if (frame->offset < end) {
            size_t take = end - frame->offset;
            if (take > (size_t)count - copied) take = (size_t)count - copied;
            memcpy(buffer + copied, parts[part] + (frame->offset - start), take);
            copied += take;
            frame->offset += take;
        }
        start = end;
    }
    return (int)copied;
}

static void iec_gif_put16(uint8_t *at, int value) {
    at[0] = (uint8_t)(value & 0xFF);
    at[1] = (uint8_t)((value >> 8) & 0xFF);
}

static void iec_gif_message(int code, const char *what, char message[IEC_MESSAGE_MAX]) {
    const char *reason = GifErrorString(code);
    snprintf(message, IEC_MESSAGE_MAX, "giflib %s: %s", what, reason != NULL ? reason : "unknown error");
}

iec_gif_frame *iec_gif_frame_open(const uint8_t *data, size_t size, int width, int height,
                                  int check_overrun, char message[IEC_MESSAGE_MAX]) {
    if (width <= 0 || height <= 0 || width > 65535 || height > 65535) {
        strncpy(message, "giflib: a frame side outside 1-65535", IEC_MESSAGE_MAX);
        return NULL;
    }
    struct iec_gif_frame *frame = calloc(1, sizeof(*frame));
    if (frame == NULL) {
        strncpy(message, "giflib: out of memory", IEC_MESSAGE_MAX);
        return NULL;
    }
    frame->data = data;
    frame->size = size;
    frame->width = width;
    frame->check_overrun = check_overrun && height < 65535;
    int rows = frame->check_overrun ? height + 1 : height;
    uint8_t *p = frame->preamble;
    memcpy(p, "GIF89a", 6);
    iec_gif_put16(p + 6, width);
    iec_gif_put16(p + 8, rows);
    // Flags, background index, aspect: no global colour table.
    p[10] = p[11] = p[12] = 0;
    p[13] = 0x2C;
    iec_gif_put16(p + 14, 0);
    iec_gif_put16(p + 16, 0);
    iec_gif_put16(p + 18, width);
    iec_gif_put16(p + 20, rows);
    // No local colour table, not interlaced: rows come as stored, Swift places them.
    p[22] = 0;
    int error = 0;
    frame->gif = DGifOpen(frame, iec_gif_read, &error);
    if (frame->gif == NULL) {
        iec_gif_message(error, "open", message);
        free(frame);
        return NULL;
    }
    GifRecordType type;
    if (DGifGetRecordType(frame->gif, &type) == GIF_ERROR || type != IMAGE_DESC_RECORD_TYPE ||
        DGifGetImageDesc(frame->gif) == GIF_ERROR) {
        iec_gif_message(frame->gif->Error != 0 ? frame->gif->Error : D_GIF_ERR_NO_IMAG_DSCR, "frame", message);
        iec_gif_frame_close(frame);
        return NULL;
    }
    return frame;
}

iec_status iec_gif_frame_row(iec_gif_frame *frame, uint8_t *row, char message[IEC_MESSAGE_MAX]) {
    if (DGifGetLine(frame->gif, row, frame->width) == GIF_ERROR) {
        int code = frame->gif->Error;
        iec_gif_message(code, "frame data", message);
        return code == D_GIF_ERR_EOF_TOO_SOON || code == D_GIF_ERR_READ_FAILED || code == D_GIF_ERR_IMAGE_DEFECT
                   ? IEC_TRUNCATED
                   : IEC_ERROR;
    }
    return IEC_OK;
}

iec_status iec_gif_frame_finish(iec_gif_frame *frame, char message[IEC_MESSAGE_MAX]) {
    if (!frame->check_overrun) return IEC_OK;
    // The row giflib was told of beyond the frame: if the data gives even one pixel of it, the
    // data makes more pixels than the frame holds. An error (the end code, the data's end) is
    // the data ending where it should.
    GifPixelType pixel;
    if (DGifGetLine(frame->gif, &pixel, 1) == GIF_ERROR) return IEC_OK;
    strncpy(message, "the frame's LZW data makes more pixels than the frame holds", IEC_MESSAGE_MAX);
    return IEC_ERROR;
}

void iec_gif_frame_close(iec_gif_frame *frame) {
    if (frame == NULL) return;
    if (frame->gif != NULL) {
        int error = 0;
        DGifCloseFile(frame->gif, &error);
    }
    free(frame);
}
