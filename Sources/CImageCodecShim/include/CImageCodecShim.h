// The only C in the engine: error handling, memory managers and metadata limits for libjpeg-turbo
// and libpng, status-to-message mapping and buffer ownership for libwebp and libheif,
// the error handler and pixel-layout constants for Little CMS, and the one hook that lets Swift
// supply libjpeg's inverse DCT (the reduced-scale ones, ReducedScaleIDCT.swift).
//
// libjpeg and libpng report fatal errors by longjmp (libjpeg's default handler even calls exit()).
// A longjmp must never cross a Swift frame, so every library call that can fail is made from a
// function in this file, under a setjmp that lives in that same function, and comes back to Swift
// as a status code plus a message. Nothing here decides anything about images: that is Swift's job.
#ifndef C_IMAGE_CODEC_SHIM_H
#define C_IMAGE_CODEC_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jpeglib.h>
#include <jerror.h>
#include <png.h>
#include <lcms2.h>
#include <webp/decode.h>
#include <webp/encode.h>
#include <webp/mux.h>
#include <gif_lib.h>
#include <libheif/heif.h>
#include <avif/avif.h>

/// Outcome of a shim call. Anything but IEC_OK leaves a message in the object's message buffer.
typedef enum {
    IEC_OK = 0,
    /// The library reported an error: corrupt data, unsupported feature, or misuse.
    IEC_ERROR = 1,
    /// The data ended before the image did.
    IEC_TRUNCATED = 2,
    /// An allocation failed, or libjpeg's own max_memory_to_use was passed.
    IEC_OUT_OF_MEMORY = 3,
    /// The library asked for more than the ceiling set on the decoder (iec_memory_usage.limit).
    IEC_LIMIT_EXCEEDED = 4,
    /// The data uses a feature the library does not implement (libwebp).
    IEC_UNSUPPORTED = 5,
    /// The stop probe asked the call to stop (its task was cancelled): nothing is wrong with the
    /// data, and nothing is returned.
    IEC_CANCELLED = 6
} iec_status;

/// Asked at the library's progress points — libjpeg's progress monitor (every scanline call,
/// every iMCU row of a progressive file's scans and of each compression pass), libwebp's
/// encoder progress hook, the shim's own row loops — and nonzero stops the call with
/// IEC_CANCELLED. It is how a cancelled task stops a decode or an encode that is one library
/// call long. Swift passes one that reads the current task's cancellation; NULL never stops.
typedef int (*iec_stop_probe)(void);

#define IEC_MESSAGE_MAX 256
/// Tolerated warnings a decoder records for the caller (more are only counted).
#define IEC_WARNINGS_MAX 8

void iec_free(void *pointer);

/// What a decoder's library has allocated, counted by the shim's allocator (libpng's malloc_fn,
/// wrappers around libjpeg's memory-manager methods): bytes held now, the most held at once,
/// and the ceiling (0: none) beyond which an allocation fails as out of memory.
typedef struct {
    size_t current;
    size_t peak;
    size_t limit;
} iec_memory_usage;

// MARK: - JPEG decoding

typedef struct iec_jpeg_decoder iec_jpeg_decoder;

/// Creates a decompressor reading from `data` (which must outlive the decoder, or be handed
/// again with iec_jpeg_decoder_rebase before the next call).
/// `strict`: every warning that means damaged or missing data becomes an error.
/// `max_memory`: libjpeg's own ceiling for its whole-image buffers in bytes (0 = none).
/// `max_scans`: progressive scans allowed before the file is rejected (0 = no limit).
/// `max_icc_bytes`: APP2 ICC chunks kept, in bytes; once they would pass it, the profile is
/// dropped whole (iec_jpeg_decoder_icc_dropped). Of the other markers only the first EXIF APP1
/// is kept; COM and every other APPn are skipped unread.
/// Returns NULL only when the decoder object itself cannot be allocated.
/// `stop`: see iec_stop_probe.
iec_jpeg_decoder *iec_jpeg_decoder_create(const uint8_t *data, size_t size, int strict,
                                          long max_memory, int max_scans, size_t max_icc_bytes,
                                          iec_stop_probe stop);
/// The same data at a new address (the caller's buffer may have moved between calls): reading
/// goes on at the same offset.
void iec_jpeg_decoder_rebase(iec_jpeg_decoder *decoder, const uint8_t *data, size_t size);
/// What libjpeg has allocated through this decoder, and its ceiling.
iec_memory_usage iec_jpeg_decoder_memory(const iec_jpeg_decoder *decoder);
/// Sets the ceiling for libjpeg's allocations from now on (0: none); the peak restarts at the
/// bytes held now.
void iec_jpeg_decoder_set_memory_limit(iec_jpeg_decoder *decoder, size_t limit);
/// 1 when the file's ICC chunks passed max_icc_bytes and were dropped.
int iec_jpeg_decoder_icc_dropped(const iec_jpeg_decoder *decoder);
/// Bytes of ICC chunks held (their payloads and marker records), dropped ones included: they
/// stay in libjpeg's image pool until the decode ends.
size_t iec_jpeg_decoder_icc_bytes(const iec_jpeg_decoder *decoder);
/// Changes `strict` (see iec_jpeg_decoder_create) for the calls from now on.
void iec_jpeg_decoder_set_strict(iec_jpeg_decoder *decoder, int strict);
/// Leaves Huffman-coded scans to libjpeg's own entropy decoders (jdhuff.c, jdphuff.c) instead
/// of the engine's (jpeg_sequential.c, jpeg_progressive.c), for comparing them; before the
/// decode starts.
void iec_jpeg_decoder_use_library_entropy(iec_jpeg_decoder *decoder);
/// Whether the engine's entropy decoders have been reading this decode's scans.
int iec_jpeg_decoder_decodes_entropy(const iec_jpeg_decoder *decoder);
void iec_jpeg_decoder_destroy(iec_jpeg_decoder *decoder);

/// The libjpeg state, for reading header fields and setting output parameters.
struct jpeg_decompress_struct *iec_jpeg_decoder_info(iec_jpeg_decoder *decoder);
const char *iec_jpeg_decoder_message(const iec_jpeg_decoder *decoder);
/// libjpeg's message code (J_MESSAGE_CODE) of the error that stopped decoding.
int iec_jpeg_decoder_message_code(const iec_jpeg_decoder *decoder);
/// Warnings seen so far (tolerated ones included).
int iec_jpeg_decoder_warning_count(const iec_jpeg_decoder *decoder);
/// 1 when the data ended early (libjpeg then pads the image with grey).
int iec_jpeg_decoder_saw_truncation(const iec_jpeg_decoder *decoder);
/// Warnings tolerated and recorded (at most IEC_WARNINGS_MAX), with libjpeg's code and message.
int iec_jpeg_decoder_recorded_warnings(const iec_jpeg_decoder *decoder);
int iec_jpeg_decoder_warning_code(const iec_jpeg_decoder *decoder, int index);
const char *iec_jpeg_decoder_warning_message(const iec_jpeg_decoder *decoder, int index);

/// Status of creation (empty input is reported here).
iec_status iec_jpeg_decoder_status(const iec_jpeg_decoder *decoder);
/// Reads markers up to the first scan, keeping the first EXIF APP1 and the ICC APP2 chunks.
iec_status iec_jpeg_read_header(iec_jpeg_decoder *decoder);
iec_status iec_jpeg_calc_output_dimensions(iec_jpeg_decoder *decoder);
/// Reassembles the ICC profile from APP2 markers; *profile is malloc'd (free with iec_free) or NULL.
iec_status iec_jpeg_read_icc_profile(iec_jpeg_decoder *decoder, uint8_t **profile, unsigned int *length);
iec_status iec_jpeg_start_decompress(iec_jpeg_decoder *decoder);
iec_status iec_jpeg_read_scanlines(iec_jpeg_decoder *decoder, uint8_t **rows, unsigned int max_rows,
                                   unsigned int *rows_read);
/// Restricts the rows still to be read to the columns [*xoffset, *xoffset + *width) (scaled
/// pixels), widened by libjpeg to whole iMCUs: on return they hold the span actually delivered.
/// After iec_jpeg_start_decompress, before the first row.
iec_status iec_jpeg_crop_scanline(iec_jpeg_decoder *decoder, unsigned int *xoffset, unsigned int *width);
/// Skips `count` rows without IDCT, upsampling or colour conversion; *skipped says how many.
iec_status iec_jpeg_skip_scanlines(iec_jpeg_decoder *decoder, unsigned int count, unsigned int *skipped);
iec_status iec_jpeg_finish_decompress(iec_jpeg_decoder *decoder);

/// libjpeg's inverse DCT for one block of one component (jpegint.h's inverse_DCT_method_ptr):
/// dequantizes `coefficients` (natural order) and writes the component's DCT_scaled_size ×
/// DCT_scaled_size samples at column `output_column` of rows output[0...].
typedef void (*iec_jpeg_idct_method)(j_decompress_ptr cinfo, jpeg_component_info *component,
                                     JCOEFPTR coefficients, JSAMPARRAY output, JDIMENSION output_column);
/// Makes `method` the inverse DCT of component `index` for the rest of the output pass (after
/// iec_jpeg_start_decompress, which is where libjpeg chooses its own). Returns 0 and changes
/// nothing when the component has no quantization table yet or the index is out of range.
int iec_jpeg_replace_idct(iec_jpeg_decoder *decoder, int index, iec_jpeg_idct_method method);
/// The engine's float IDCT for components libjpeg decodes at `size`×`size` per block
/// (iec_idct_scaled in CImageKernels), or NULL for a size it does not make.
iec_jpeg_idct_method iec_jpeg_scaled_idct(int size);

// MARK: - JPEG encoding

typedef struct {
    uint32_t width;
    uint32_t height;
    /// 1 (JCS_GRAYSCALE) or 3 (JCS_RGB).
    int components;
    int quality;
    /// Quality of the chroma table (libjpeg's standard one, scaled the same way); 0: `quality`.
    int chroma_quality;
    int optimize_coding;
    int progressive;
    /// Luma sampling factors: 2x2 is 4:2:0, 2x1 is 4:2:2, 1x1 is 4:4:4.
    int luma_h_samp;
    int luma_v_samp;
    const uint8_t *icc_profile;
    unsigned int icc_length;
    /// 64 luma quantization steps at quality 50, natural (row-major) order, scaled by quality
    /// as libjpeg scales its own; NULL keeps libjpeg's standard (Annex K) table.
    const unsigned int *luma_quant_table;
    /// Largest output accepted (0: no limit); beyond it the encode fails as out of memory.
    size_t max_output_bytes;
    /// See iec_stop_probe.
    iec_stop_probe stop;
} iec_jpeg_encode_params;

/// Encodes a whole bitmap. On success *output is malloc'd (free with iec_free).
iec_status iec_jpeg_encode(const iec_jpeg_encode_params *params, const uint8_t *pixels,
                           size_t bytes_per_row, uint8_t **output, unsigned long *output_length,
                           char message[IEC_MESSAGE_MAX]);

// MARK: - JPEG encoding from coefficients

/// A JPEG written from DCT coefficients the caller computes (libjpeg's transcoding API,
/// jpeg_write_coefficients): libjpeg does the Huffman coding, optimised tables and progressive
/// scans; the DCT, the quantization tables and every quantized value come from Swift.
typedef struct iec_jpeg_coefficient_encoder iec_jpeg_coefficient_encoder;

typedef struct {
    uint32_t width;
    uint32_t height;
    /// 1 (grayscale) or 3 (YCbCr).
    int components;
    /// Luma sampling factors (1 or 2 each); chroma is always 1x1.
    int luma_h_samp;
    int luma_v_samp;
    int progressive;
    /// 64 steps each, natural (row-major) order, 1...255: component 0's, and components 1 and 2's.
    const unsigned int *luma_quant_table;
    const unsigned int *chroma_quant_table;
    const uint8_t *icc_profile;
    unsigned int icc_length;
    /// Largest output accepted (0: no limit); beyond it the encode fails as out of memory.
    size_t max_output_bytes;
    /// See iec_stop_probe.
    iec_stop_probe stop;
} iec_jpeg_coefficient_params;

/// Sets up the encoder and writes the file's header (and ICC profile). Returns NULL only when
/// allocation fails; otherwise check iec_jpeg_coefficient_encoder_status.
iec_jpeg_coefficient_encoder *iec_jpeg_coefficient_encoder_create(const iec_jpeg_coefficient_params *params);
iec_status iec_jpeg_coefficient_encoder_status(const iec_jpeg_coefficient_encoder *encoder);
const char *iec_jpeg_coefficient_encoder_message(const iec_jpeg_coefficient_encoder *encoder);
/// Blocks across and down component `component`'s coefficient array: whole MCUs, so they may
/// exceed the image by up to one MCU (libjpeg replaces blocks wholly outside it).
unsigned int iec_jpeg_coefficient_blocks_wide(const iec_jpeg_coefficient_encoder *encoder, int component);
unsigned int iec_jpeg_coefficient_blocks_high(const iec_jpeg_coefficient_encoder *encoder, int component);
/// The blocks of row `row` of component `component` (64 coefficients each, natural order),
/// for the caller to fill; valid until the next call on the encoder.
iec_status iec_jpeg_coefficient_row(iec_jpeg_coefficient_encoder *encoder, int component, unsigned int row,
                                    JCOEF **blocks);
/// Entropy-codes the coefficients. On success *output is malloc'd (free with iec_free).
iec_status iec_jpeg_coefficient_encoder_finish(iec_jpeg_coefficient_encoder *encoder, uint8_t **output,
                                               unsigned long *output_length);
void iec_jpeg_coefficient_encoder_destroy(iec_jpeg_coefficient_encoder *encoder);

// MARK: - PNG decoding

typedef struct iec_png_decoder iec_png_decoder;

typedef struct {
    uint32_t width;
    uint32_t height;
    int bit_depth;
    int color_type;
    int interlaced;
    int has_transparency_chunk;
    /// A view into libpng's memory, valid while the decoder lives.
    const uint8_t *icc_profile;
    uint32_t icc_length;
} iec_png_header;

typedef struct {
    int channels;
    size_t row_bytes;
    int passes;
} iec_png_output;

/// `data` must outlive the decoder (or be handed again with iec_png_decoder_rebase).
/// Every ancillary chunk but iCCP and tRNS is skipped unread (never inflated, never stored);
/// an iCCP whose profile is larger than `max_icc_bytes` is dropped with a warning.
/// Returns NULL only when allocation fails.
iec_png_decoder *iec_png_decoder_create(const uint8_t *data, size_t size, size_t max_icc_bytes);
void iec_png_decoder_rebase(iec_png_decoder *decoder, const uint8_t *data, size_t size);
void iec_png_decoder_destroy(iec_png_decoder *decoder);
const char *iec_png_decoder_message(const iec_png_decoder *decoder);
int iec_png_decoder_warning_count(const iec_png_decoder *decoder);
/// Warnings recorded (at most IEC_WARNINGS_MAX), with libpng's message each.
int iec_png_decoder_recorded_warnings(const iec_png_decoder *decoder);
const char *iec_png_decoder_warning_message(const iec_png_decoder *decoder, int index);
iec_status iec_png_decoder_status(const iec_png_decoder *decoder);
/// What libpng (and zlib under it) has allocated through this decoder, and its ceiling.
iec_memory_usage iec_png_decoder_memory(const iec_png_decoder *decoder);
/// Sets the ceiling for libpng's allocations from now on (0: none); the peak restarts at the
/// bytes held now.
void iec_png_decoder_set_memory_limit(iec_png_decoder *decoder, size_t limit);

iec_status iec_png_read_header(iec_png_decoder *decoder, iec_png_header *header);
/// Sets up the transforms to 8-bit gray, gray+alpha, RGB or RGBA (palette and low bit depths
/// expanded, tRNS turned into alpha, 16-bit scaled down) and reports the output row layout.
iec_status iec_png_configure_8bit(iec_png_decoder *decoder, iec_png_output *output);
iec_status iec_png_read_rows(iec_png_decoder *decoder, uint8_t **rows, uint32_t count);
iec_status iec_png_read_end(iec_png_decoder *decoder);

// MARK: - PNG encoding

typedef struct {
    uint32_t width;
    uint32_t height;
    /// PNG_COLOR_TYPE_GRAY, _GRAY_ALPHA, _RGB or _RGB_ALPHA, always 8 bits per sample.
    int color_type;
    int compression_level;
    const uint8_t *icc_profile;
    uint32_t icc_length;
    /// Largest output accepted (0: no limit); beyond it the encode fails as out of memory.
    size_t max_output_bytes;
    /// See iec_stop_probe.
    iec_stop_probe stop;
} iec_png_encode_params;

iec_status iec_png_encode(const iec_png_encode_params *params, const uint8_t *pixels,
                          size_t bytes_per_row, uint8_t **output, size_t *output_length,
                          char message[IEC_MESSAGE_MAX]);

// MARK: - WebP
//
// libwebp reports errors by status code (no longjmp); these wrappers turn its codes into
// iec_status plus a message and own its buffers, so that Swift sees the same shape as for JPEG
// and PNG. The container (RIFF chunks, VP8X, ANMF frames) is read in Swift (WebPContainer.swift).

/// What a VP8 or VP8L bitstream (a whole file, or one frame's ALPH + VP8 / VP8L chunks) declares.
typedef struct {
    int width;
    int height;
    int has_alpha;
    int has_animation;
    /// 0: mixed or undefined, 1: lossy (VP8), 2: lossless (VP8L).
    int format;
} iec_webp_features;

/// Reads the bitstream's features; allocates nothing.
iec_status iec_webp_get_features(const uint8_t *data, size_t size, iec_webp_features *features,
                                 char message[IEC_MESSAGE_MAX]);

/// Decodes the bitstream into `output` (the caller's buffer of `height` rows of `stride` bytes) as
/// RGB (`channels` 3) or non-premultiplied RGBA (4), scaled by libwebp's area-averaging rescaler
/// to `width` × `height` unless that is the bitstream's own size. libwebp's incremental decoder
/// is handed the data a slice at a time (never copied), and `stop` is asked between slices.
iec_status iec_webp_decode(const uint8_t *data, size_t size, int channels, int width, int height,
                           uint8_t *output, size_t stride, iec_stop_probe stop,
                           char message[IEC_MESSAGE_MAX]);

typedef struct {
    uint32_t width;
    uint32_t height;
    /// 3 (RGB) or 4 (RGBA, not premultiplied).
    int channels;
    /// 0...100.
    float quality;
    /// libwebp's effort, 0 (fastest) ... 6 (smallest).
    int method;
    /// libwebp's sharp RGB→YUV conversion: crisper colour edges, slower.
    int sharp_yuv;
    /// See iec_stop_probe (asked through libwebp's progress hook).
    iec_stop_probe stop;
} iec_webp_encode_params;

/// Encodes a whole bitmap as a lossy WebP (alpha kept, losslessly). On success *output is
/// malloc'd (free with iec_free).
iec_status iec_webp_encode(const iec_webp_encode_params *params, const uint8_t *pixels,
                           size_t bytes_per_row, uint8_t **output, size_t *output_length,
                           char message[IEC_MESSAGE_MAX]);

/// An animated WebP being written: libwebp's WebPAnimEncoder, which keeps what it needs of
/// the previous frames (to encode only what changed) and the encoded frames until the end.
typedef struct iec_webp_animation iec_webp_animation;

/// An encoder for frames of `width` × `height` that plays `loop_count` times (0: forever), each
/// frame lossy at `params->quality` and `params->method` (alpha kept). NULL with a message on
/// failure. `params->width`, `height` and `channels` are ignored (frames are RGBA).
iec_webp_animation *iec_webp_animation_create(int width, int height, int loop_count,
                                              const iec_webp_encode_params *params,
                                              char message[IEC_MESSAGE_MAX]);

/// Adds a frame (non-premultiplied RGBA, the encoder's size) shown from `timestamp_ms`.
iec_status iec_webp_animation_add(iec_webp_animation *animation, const uint8_t *pixels,
                                  size_t bytes_per_row, int timestamp_ms,
                                  char message[IEC_MESSAGE_MAX]);

/// Ends the animation at `end_ms` (the last frame's timestamp plus its duration) and writes the
/// file. On success *output is malloc'd (free with iec_free).
iec_status iec_webp_animation_finish(iec_webp_animation *animation, int end_ms, uint8_t **output,
                                     size_t *output_length, char message[IEC_MESSAGE_MAX]);

void iec_webp_animation_free(iec_webp_animation *animation);

// MARK: - GIF (giflib)
//
// giflib reports errors by code (no longjmp). The file itself never reaches it: GIFContainer.swift
// walks the blocks, checks every frame against the limits, and hands one frame's LZW data at a
// time to a decoder here, which gives giflib a minimal stream (a screen the frame's size, one
// image descriptor, the data) and returns rows of palette indices. Palettes, transparency,
// interlacing, disposal and timing are Swift's.

typedef struct iec_gif_frame iec_gif_frame;

/// A decoder for one frame of `width` × `height` pixels whose LZW data (the minimum-code-size
/// byte, the sub-blocks and their terminator) is `data`. With `check_overrun`, giflib is told
/// of one more row, so that iec_gif_frame_finish can see whether the data makes more pixels
/// than the frame holds. NULL with a message on failure. `data` must outlive the decoder.
iec_gif_frame *iec_gif_frame_open(const uint8_t *data, size_t size, int width, int height,
                                  int check_overrun, char message[IEC_MESSAGE_MAX]);

/// The next row of the frame, in the order the data stores them (interlaced frames: by pass),
/// `width` palette indices into `row`. IEC_TRUNCATED when the data ends first.
iec_status iec_gif_frame_row(iec_gif_frame *frame, uint8_t *row, char message[IEC_MESSAGE_MAX]);

/// After the last row: IEC_ERROR when the data goes on making pixels past the frame (only
/// known with `check_overrun`), IEC_OK otherwise.
iec_status iec_gif_frame_finish(iec_gif_frame *frame, char message[IEC_MESSAGE_MAX]);

void iec_gif_frame_close(iec_gif_frame *frame);

// MARK: - HEIC (libheif)
//
// libheif reports errors as struct heif_error (it catches its own C++ exceptions); these
// wrappers turn them into iec_status plus a message and own the context, the primary image's
// handle and the decoded image. Nothing here decides anything about images.

typedef struct iec_heif_reader iec_heif_reader;

/// What the primary image's handle says, after libheif's transformations (irot, imir, clap).
typedef struct {
    int width;
    int height;
    int has_alpha;
    int premultiplied_alpha;
    /// Bits per luma sample (8, 10, 12); -1 when the file does not say.
    int luma_bits;
    /// 0: none, 1: an ICC profile (prof or rICC), 2: nclx only.
    int profile_kind;
    /// nclx colour primaries and transfer characteristics (ITU-T H.273), when profile_kind is 2.
    int nclx_primaries;
    int nclx_transfer;
    /// Whether the image has an nclx colour box (beside an ICC profile or alone), and its
    /// matrix coefficients (ITU-T H.273) and full-range flag: what libheif converts with.
    int has_nclx;
    int nclx_matrix;
    int nclx_full_range;
    /// Number of top-level images in the file.
    int image_count;
} iec_heif_info;

/// Reads the file's boxes and opens the primary image. libheif reads `data` in place, here and
/// in every decode: it must be valid and at the same address whenever the reader is used.
/// Images larger than `max_side` on a side are refused by libheif itself. NULL with *status set
/// on failure.
iec_heif_reader *iec_heif_reader_create(const uint8_t *data, size_t size, int max_side, iec_status *status,
                                        char message[IEC_MESSAGE_MAX]);
void iec_heif_reader_destroy(iec_heif_reader *reader);
void iec_heif_reader_info(const iec_heif_reader *reader, iec_heif_info *info);
/// Decodes the primary image, transformations applied, as interleaved 8-bit RGB (`channels` 3)
/// or RGBA (4); the pixels stay owned by the reader until it is destroyed or decodes again.
/// `max_side` becomes libheif's image size limit for the decode: a derived image (grid,
/// overlay) whose own canvas is larger on a side is refused before its canvas is allocated.
/// libheif decodes leniently (its strict mode leaks the AV1 decoder on some errors); what it
/// papered over is counted in *warnings, the first one's text left in `message`.
iec_status iec_heif_reader_decode(iec_heif_reader *reader, int channels, int max_side,
                                  const uint8_t **pixels, size_t *stride, int *width, int *height, int *warnings,
                                  char message[IEC_MESSAGE_MAX]);

/// The planes of a YCbCr decode, owned by the reader as an interleaved decode's pixels are.
typedef struct {
    const uint8_t *y, *cb, *cr;
    size_t y_stride, cb_stride, cr_stride;
    int width, height;
    int chroma_width, chroma_height;
} iec_heif_planes;

/// Decodes the primary image, transformations applied, as 8-bit YCbCr planes with the chroma
/// layout the stream is coded in (`chroma`: 1 4:2:0, otherwise 4:4:4), which the caller read
/// from the stream's parameter sets, so libheif converts nothing. Otherwise as
/// iec_heif_reader_decode.
iec_status iec_heif_reader_decode_planes(iec_heif_reader *reader, int chroma, int max_side, iec_heif_planes *planes,
                                         int *warnings, char message[IEC_MESSAGE_MAX]);

// MARK: - AVIF (libavif: AV1 decoded by dav1d, encoded by libaom)
//
// libavif reports errors as avifResult plus a diagnostic string; these wrappers turn them into
// iec_status plus a message and own the decoder and the RGB image it converts into. libavif
// reads the caller's bytes in place: they must outlive the reader. It applies no
// transformation (irot, imir, clap): they are reported, and Swift applies them.

typedef struct iec_avif_reader iec_avif_reader;

/// What the parsed primary image says, as coded (before any transformation).
typedef struct {
    uint32_t width;
    uint32_t height;
    /// Bits per sample: 8, 10 or 12.
    int depth;
    /// The colour's chroma subsampling, libavif's avifPixelFormat (1: 4:4:4, 2: 4:2:2, 3: 4:2:0,
    /// 4: monochrome; 0: unknown).
    int yuv_format;
    /// An alpha image (premultiplied or not: the decode hands out straight alpha).
    int has_alpha;
    /// An ICC profile (colr prof); its bytes are read by the engine's container walk.
    int has_icc;
    /// nclx colour primaries and transfer characteristics (ITU-T H.273).
    int color_primaries;
    int transfer_characteristics;
    /// irot: quarter turns anticlockwise (0 without irot); imir: 0 exchanges top and bottom,
    /// 1 left and right, -1 without imir. Applied after the clean aperture, rotation first.
    int rotation;
    int mirror;
    /// The clean aperture (clap) as a crop of the coded image (the whole image without clap);
    /// crop_valid is 0 when the box gives no valid crop.
    uint32_t crop_x;
    uint32_t crop_y;
    uint32_t crop_width;
    uint32_t crop_height;
    int crop_valid;
} iec_avif_info;

/// Parses the file's boxes (no AV1 decoded) with dav1d as the decoder, one thread, the primary
/// item only, and libavif's own limits: `max_pixels` in all, `max_side` on a side. NULL with
/// *status set on failure.
iec_avif_reader *iec_avif_reader_create(const uint8_t *data, size_t size, uint32_t max_pixels, uint32_t max_side,
                                        iec_status *status, char message[IEC_MESSAGE_MAX]);
void iec_avif_reader_destroy(iec_avif_reader *reader);
void iec_avif_reader_info(const iec_avif_reader *reader, iec_avif_info *info);
/// Decodes the primary image (colour and alpha) and converts it to interleaved 8-bit RGB
/// (`channels` 3) or straight RGBA (4), as coded: no transformation applied. The pixels stay
/// owned by the reader until it is destroyed or decodes again.
iec_status iec_avif_reader_decode(iec_avif_reader *reader, int channels, const uint8_t **pixels, size_t *stride,
                                  char message[IEC_MESSAGE_MAX]);

typedef struct {
    uint32_t width;
    uint32_t height;
    /// 3 (RGB) or 4 (RGBA, not premultiplied: alpha becomes an auxiliary image).
    int channels;
    /// libaom's constant-quality level (0 best ... 63), and the quantizers it may range over,
    /// for colour and alpha alike.
    int cq_level;
    int min_quantizer;
    int max_quantizer;
    /// 1: libaom tuned for SSIM, 0: for PSNR.
    int tune_ssim;
    /// 0: no intra block copy, the screen-content tool libaom turns on when it takes an image
    /// for a screenshot.
    int intra_block_copy;
    /// libaom's speed, 0 (slowest, smallest) ... 9 (fastest).
    int speed;
    /// An ICC profile to write (NULL: none, the file then says sRGB in its nclx box).
    const uint8_t *icc_profile;
    size_t icc_length;
    /// A TIFF-structured EXIF block to write as the image's Exif item (NULL: none).
    const uint8_t *exif;
    size_t exif_length;
} iec_avif_encode_params;

/// Encodes a whole bitmap (8-bit RGB or straight RGBA) as a still AVIF: 4:2:0, nclx sRGB with
/// BT.601 full-range coefficients, libaom on one thread. On success *output is malloc'd (free
/// with iec_free).
iec_status iec_avif_encode(const iec_avif_encode_params *params, const uint8_t *pixels, size_t bytes_per_row,
                           uint8_t **output, size_t *output_length, char message[IEC_MESSAGE_MAX]);

// MARK: - Little CMS

// Little CMS never longjmps: a failing call returns NULL and reports through a log handler.
// The shim owns that handler (it keeps the last message per thread instead of printing) and
// the TYPE_* layout constants, which are macros Swift cannot import.

/// Pixel layouts a transform reads or writes, all 8 bits per sample.
typedef enum {
    IEC_CMS_RGB = 0,
    IEC_CMS_RGBA = 1,
    IEC_CMS_GRAY = 2,
    IEC_CMS_GRAYA = 3,
    /// 255 = full ink, as libjpeg delivers CMYK without an Adobe marker.
    IEC_CMS_CMYK = 4,
    /// 0 = full ink: Adobe's inverted CMYK (and YCCK after libjpeg's conversion).
    IEC_CMS_CMYK_INVERTED = 5
} iec_cms_layout;

/// The context every profile and transform is made in: its log handler records instead of
/// printing. NULL when Little CMS could not create it; then no profile opens.
cmsContext iec_cms_context(void);

/// Opens a profile from memory. NULL when Little CMS rejects it; its message is then in `message`.
cmsHPROFILE iec_cms_open_profile(const uint8_t *bytes, size_t length, char message[IEC_MESSAGE_MAX]);

/// sRGB (IEC 61966-2.1) as Little CMS builds it, and a gray profile with the sRGB tone curve.
cmsHPROFILE iec_cms_create_srgb_profile(void);
cmsHPROFILE iec_cms_create_srgb_gray_profile(void);

/// A transform between two layouts; alpha, when both have it, is copied. NULL on failure,
/// with Little CMS' message in `message`. Made without the 1-pixel cache, so it may be used
/// from several threads at once.
cmsHTRANSFORM iec_cms_create_transform(cmsHPROFILE input, iec_cms_layout input_layout, cmsHPROFILE output,
                                       iec_cms_layout output_layout, int intent, int black_point_compensation,
                                       char message[IEC_MESSAGE_MAX]);

// MARK: Pages

/// `bytes` of memory, or NULL: from 4 MiB on, whole pages straight from the kernel (mmap on
/// Linux); below, and elsewhere than Linux, from malloc. Not necessarily zeroed.
void *iec_pages_allocate(size_t bytes);

/// `pages` (of `old_bytes`) made `new_bytes` long, contents kept, moved rather than copied
/// where both sizes are pages (mremap); NULL, and `pages` untouched, on failure.
void *iec_pages_resize(void *pages, size_t old_bytes, size_t new_bytes);

/// Gives back memory of `bytes` from iec_pages_allocate or iec_pages_resize.
void iec_pages_free(void *pages, size_t bytes);

#endif
