// libjpeg-turbo error manager and call wrappers. See CImageCodecShim.h for the rules.
#include "CImageCodecShim.h"
#include "CImageKernels.h"
#include "jpeg_entropy.h"
#include "memory_budget.h"

#include <jerror.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

void iec_free(void *pointer) { free(pointer); }

/// Error manager shared by the decoder and the encoder: records the message and jumps back to
/// the setjmp of the shim function that made the library call.
typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    char message[IEC_MESSAGE_MAX];
    int strict;
    int reading_header;
    int warnings;
    int truncated;
    int truncated_in_header;
    int code;
    iec_status status;
    /// Set when the counting memory manager refused an allocation for the decoder's ceiling.
    int limit_hit;
    /// The first IEC_WARNINGS_MAX warnings tolerated, for the decode result.
    int recorded;
    int warning_codes[IEC_WARNINGS_MAX];
    char warning_messages[IEC_WARNINGS_MAX][IEC_MESSAGE_MAX];
} iec_jpeg_error;

/// libjpeg's progress monitor for every decoder and encoder here. libjpeg calls it on every
/// scanline call and every iMCU row of a progressive file's input scans and of each compression
/// pass, so it is where a call that is one library call long (a progressive decode's scans, a
/// whole encode) can stop.
typedef struct {
    /// First member: cinfo->progress points at it, which is the monitor's address too.
    struct jpeg_progress_mgr pub;
    iec_stop_probe stop;
    /// Progressive scans allowed before the file is rejected (0: no limit; decoders only).
    int max_scans;
    /// The decoder's entropy decoders, put in place at the first call of a decode's scan loop
    /// (decoders only; NULL for encoders).
    iec_jpeg_entropy *entropy;
} iec_jpeg_monitor;

static void iec_jpeg_format_message(j_common_ptr cinfo, char *buffer) {
    char text[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, text);
    strncpy(buffer, text, IEC_MESSAGE_MAX - 1);
    buffer[IEC_MESSAGE_MAX - 1] = '\0';
}

static void iec_jpeg_error_exit(j_common_ptr cinfo) {
    iec_jpeg_error *error = (iec_jpeg_error *)cinfo->err;
    iec_jpeg_format_message(cinfo, error->message);
    int code = error->pub.msg_code;
    error->code = code;
    if (code == JERR_OUT_OF_MEMORY && error->limit_hit) {
        error->status = IEC_LIMIT_EXCEEDED;
    } else if (code == JERR_OUT_OF_MEMORY || code == JERR_NO_BACKING_STORE) {
        error->status = IEC_OUT_OF_MEMORY;
    } else if (code == JERR_INPUT_EMPTY || code == JERR_INPUT_EOF || error->truncated) {
        // After a truncation warning (a lenient decoder read on past the end, libjpeg made up
        // an EOI), whatever fails next fails because the data ended.
        error->status = IEC_TRUNCATED;
    } else {
        error->status = IEC_ERROR;
    }
    longjmp(error->jump, 1);
}

/// Warnings after which libjpeg had to invent or drop pixel data: it fills what it could not
/// decode with grey or garbage, so a strict decoder must not return the image. Every other
/// warning is about bytes out of place (padding, an unusual SOS in a baseline file, an unknown
/// JFIF revision or Adobe transform, a bad ICC marker): the pixels are exactly what the file
/// holds, so it is tolerated and recorded. A code this list does not know counts as damage.
static int iec_jpeg_warning_means_damage(int code) {
    switch (code) {
    case JWRN_EXTRANEOUS_DATA:
    case JWRN_NOT_SEQUENTIAL:
    case JWRN_JFIF_MAJOR:
    case JWRN_ADOBE_XFORM:
    case JWRN_BOGUS_ICC:
    case JWRN_TOO_MUCH_DATA:
        return 0;
    case JWRN_ARITH_BAD_CODE:
    case JWRN_BOGUS_PROGRESSION:
    case JWRN_HIT_MARKER:
    case JWRN_HUFF_BAD_CODE:
    case JWRN_JPEG_EOF:
    case JWRN_MUST_RESYNC:
    default:
        return 1;
    }
}

static void iec_jpeg_emit_message(j_common_ptr cinfo, int level) {
    iec_jpeg_error *error = (iec_jpeg_error *)cinfo->err;
    if (level >= 0) return;  // trace messages: never printed
    error->warnings += 1;
    int code = error->pub.msg_code;
    if (code == JWRN_JPEG_EOF) {
        error->truncated = 1;
        if (error->reading_header) error->truncated_in_header = 1;
    }
    if (error->strict && iec_jpeg_warning_means_damage(code)) {
        iec_jpeg_format_message(cinfo, error->message);
        error->code = code;
        error->status = error->truncated ? IEC_TRUNCATED : IEC_ERROR;
        longjmp(error->jump, 1);
    }
    if (error->recorded < IEC_WARNINGS_MAX) {
        error->warning_codes[error->recorded] = code;
        iec_jpeg_format_message(cinfo, error->warning_messages[error->recorded]);
        error->recorded += 1;
    }
}

static void iec_jpeg_output_message(j_common_ptr cinfo) { (void)cinfo; }

static void iec_jpeg_error_init(iec_jpeg_error *error, int strict) {
    memset(error, 0, sizeof(*error));
    jpeg_std_error(&error->pub);
    error->pub.error_exit = iec_jpeg_error_exit;
    error->pub.emit_message = iec_jpeg_emit_message;
    error->pub.output_message = iec_jpeg_output_message;
    error->strict = strict;
}

// MARK: - Decoder

struct iec_jpeg_decoder {
    /// First member: libjpeg's callbacks get a pointer to it, which is the decoder's too.
    struct jpeg_decompress_struct cinfo;
    iec_jpeg_error error;
    iec_jpeg_monitor monitor;
    int created;
    iec_jpeg_entropy entropy;
    /// Where the data was when the source was last pointed at it (see rebase).
    const uint8_t *data;
    size_t size;
    /// Every allocation libjpeg makes after creation passes the counter; by pool, so that
    /// freeing a pool releases what it held.
    iec_memory_usage memory;
    size_t pool_bytes[JPOOL_NUMPOOLS];
    /// libjpeg's own methods, which the counting ones call.
    struct jpeg_memory_mgr library;
    size_t max_icc_bytes;
    size_t icc_bytes;
    int icc_dropped;
    int exif_kept;
};

// MARK: Counting memory manager

/// Counts `bytes` in `pool`, or fails the call as libjpeg's own manager does when memory runs out.
static void iec_jpeg_count(j_common_ptr cinfo, int pool, size_t bytes) {
    iec_jpeg_decoder *decoder = (iec_jpeg_decoder *)cinfo;
    if (!iec_memory_reserve(&decoder->memory, bytes)) {
        decoder->error.limit_hit = 1;
        ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 100);
    }
    if (pool >= 0 && pool < JPOOL_NUMPOOLS) decoder->pool_bytes[pool] += bytes;
}

/// libjpeg-turbo pads every sample row to a multiple of 32 bytes (ALIGN_SIZE in jmemmgr.c).
static size_t iec_jpeg_sample_rows_bytes(JDIMENSION samples_per_row, JDIMENSION rows) {
    size_t padded = ((size_t)samples_per_row + 31) / 32 * 32;
    return iec_add(iec_multiply(padded, rows), iec_multiply(sizeof(JSAMPROW), rows));
}

static size_t iec_jpeg_block_rows_bytes(JDIMENSION blocks_per_row, JDIMENSION rows) {
    return iec_add(iec_multiply(iec_multiply(blocks_per_row, sizeof(JBLOCK)), rows), iec_multiply(sizeof(JBLOCKROW), rows));
}

static void *iec_jpeg_alloc_small(j_common_ptr cinfo, int pool, size_t size) {
    iec_jpeg_count(cinfo, pool, size);
    return ((iec_jpeg_decoder *)cinfo)->library.alloc_small(cinfo, pool, size);
}

static void *iec_jpeg_alloc_large(j_common_ptr cinfo, int pool, size_t size) {
    iec_jpeg_count(cinfo, pool, size);
    return ((iec_jpeg_decoder *)cinfo)->library.alloc_large(cinfo, pool, size);
}

static JSAMPARRAY iec_jpeg_alloc_sarray(j_common_ptr cinfo, int pool, JDIMENSION samples_per_row, JDIMENSION rows) {
    iec_jpeg_count(cinfo, pool, iec_jpeg_sample_rows_bytes(samples_per_row, rows));
    return ((iec_jpeg_decoder *)cinfo)->library.alloc_sarray(cinfo, pool, samples_per_row, rows);
}

static JBLOCKARRAY iec_jpeg_alloc_barray(j_common_ptr cinfo, int pool, JDIMENSION blocks_per_row, JDIMENSION rows) {
    iec_jpeg_count(cinfo, pool, iec_jpeg_block_rows_bytes(blocks_per_row, rows));
    return ((iec_jpeg_decoder *)cinfo)->library.alloc_barray(cinfo, pool, blocks_per_row, rows);
}

/// A virtual array is allocated whole when libjpeg realizes it (jmemnobs.c has no backing
/// store), so it is counted in full when requested.
static jvirt_sarray_ptr iec_jpeg_request_virt_sarray(j_common_ptr cinfo, int pool, boolean pre_zero,
                                                     JDIMENSION samples_per_row, JDIMENSION rows, JDIMENSION max_access) {
    iec_jpeg_count(cinfo, pool, iec_jpeg_sample_rows_bytes(samples_per_row, rows));
    return ((iec_jpeg_decoder *)cinfo)->library.request_virt_sarray(cinfo, pool, pre_zero, samples_per_row, rows, max_access);
}

static jvirt_barray_ptr iec_jpeg_request_virt_barray(j_common_ptr cinfo, int pool, boolean pre_zero,
                                                     JDIMENSION blocks_per_row, JDIMENSION rows, JDIMENSION max_access) {
    iec_jpeg_count(cinfo, pool, iec_jpeg_block_rows_bytes(blocks_per_row, rows));
    return ((iec_jpeg_decoder *)cinfo)->library.request_virt_barray(cinfo, pool, pre_zero, blocks_per_row, rows, max_access);
}

static void iec_jpeg_free_pool(j_common_ptr cinfo, int pool) {
    iec_jpeg_decoder *decoder = (iec_jpeg_decoder *)cinfo;
    if (pool >= 0 && pool < JPOOL_NUMPOOLS) {
        iec_memory_release(&decoder->memory, decoder->pool_bytes[pool]);
        decoder->pool_bytes[pool] = 0;
    }
    decoder->library.free_pool(cinfo, pool);
}

/// Puts the counting methods in front of libjpeg's (after jpeg_create_decompress, whose few
/// permanent allocations are part of the decoder's constant).
static void iec_jpeg_install_counting(iec_jpeg_decoder *decoder) {
    struct jpeg_memory_mgr *methods = decoder->cinfo.mem;
    decoder->library = *methods;
    methods->alloc_small = iec_jpeg_alloc_small;
    methods->alloc_large = iec_jpeg_alloc_large;
    methods->alloc_sarray = iec_jpeg_alloc_sarray;
    methods->alloc_barray = iec_jpeg_alloc_barray;
    methods->request_virt_sarray = iec_jpeg_request_virt_sarray;
    methods->request_virt_barray = iec_jpeg_request_virt_barray;
    methods->free_pool = iec_jpeg_free_pool;
}

// MARK: Markers

/// Reads one byte through the source manager (the memory source never suspends: at the end it
/// inserts an EOI and warns, which a strict decoder turns into a truncation error).
static int iec_jpeg_next_byte(j_decompress_ptr cinfo, unsigned int *byte) {
    struct jpeg_source_mgr *source = cinfo->src;
    if (source->bytes_in_buffer == 0 && !(*source->fill_input_buffer)(cinfo)) return 0;
    source->bytes_in_buffer -= 1;
    *byte = *source->next_input_byte++;
    return 1;
}

/// The APP1 and APP2 reader: keeps the first EXIF APP1 and ICC APP2 chunks up to max_icc_bytes
/// in cinfo->marker_list, as jpeg_save_markers would, and skips everything else. libjpeg's own
/// saver keeps every APPn of a saved kind, so 1,000 64 KB markers would cost 64 MB.
static boolean iec_jpeg_read_app_marker(j_decompress_ptr cinfo) {
    iec_jpeg_decoder *decoder = (iec_jpeg_decoder *)cinfo;
    unsigned int high, low;
    if (!iec_jpeg_next_byte(cinfo, &high) || !iec_jpeg_next_byte(cinfo, &low)) return FALSE;
    // A length under 2 is bogus: libjpeg's saver keeps nothing then, and neither does this.
    long length = (long)((high << 8) | low) - 2;
    if (length <= 0) return TRUE;
    struct jpeg_source_mgr *source = cinfo->src;
    int marker = cinfo->unread_marker;
    int keep = 0;
    if ((size_t)length <= source->bytes_in_buffer) {
        const JOCTET *payload = source->next_input_byte;
        if (marker == JPEG_APP0 + 1) {
            keep = !decoder->exif_kept && length >= 6 && memcmp(payload, "Exif\0\0", 6) == 0;
            decoder->exif_kept |= keep;
        } else if (length >= 14 && memcmp(payload, "ICC_PROFILE\0", 12) == 0 && !decoder->icc_dropped) {
            size_t cost = sizeof(struct jpeg_marker_struct) + (size_t)length;
            if (cost > decoder->max_icc_bytes - decoder->icc_bytes) {
                decoder->icc_dropped = 1;
            } else {
                decoder->icc_bytes += cost;
                keep = 1;
            }
        }
    }
    if (keep) {
        jpeg_saved_marker_ptr saved = (*cinfo->mem->alloc_large)((j_common_ptr)cinfo, JPOOL_IMAGE,
                                                                 sizeof(struct jpeg_marker_struct) + (size_t)length);
        saved->next = NULL;
        saved->marker = (UINT8)marker;
        saved->original_length = (unsigned int)length;
        saved->data_length = (unsigned int)length;
        saved->data = (JOCTET *)(saved + 1);
        memcpy(saved->data, source->next_input_byte, (size_t)length);
        jpeg_saved_marker_ptr *tail = &cinfo->marker_list;
        while (*tail != NULL) tail = &(*tail)->next;
        *tail = saved;
        source->next_input_byte += length;
        source->bytes_in_buffer -= (size_t)length;
    } else {
        (*source->skip_input_data)(cinfo, length);
    }
    return TRUE;
}

/// libjpeg's decoder states (jpegint.h) in which no scan data has been read yet when the engine
/// first looks: the scan loops of jpeg_start_decompress and jpeg_read_coefficients, which read
/// all of a file of more than one scan, and the end of jpeg_start_decompress, after which a
/// single scan is read as scanlines are (a file of more scans has been taken over by then).
#define IEC_DSTATE_PRELOAD 203
#define IEC_DSTATE_SCANNING 205
#define IEC_DSTATE_RAW_OK 206
#define IEC_DSTATE_RDCOEFS 209

/// The engine's entropy decoders go in at the first monitor call of a scan loop, or after
/// jpeg_start_decompress for a single scan: libjpeg has set up the decoder and started the
/// first scan there, and read none of its data. Arithmetic-coded files stay with libjpeg.
static void iec_jpeg_take_over_scans(j_common_ptr common, iec_jpeg_entropy *entropy) {
    if (entropy == NULL || entropy->installed || !entropy->enabled || !common->is_decompressor) return;
    j_decompress_ptr cinfo = (j_decompress_ptr)common;
    if (cinfo->arith_code || cinfo->entropy == NULL) return;
    const int state = cinfo->global_state;
    if (state == IEC_DSTATE_PRELOAD || state == IEC_DSTATE_RDCOEFS || state == IEC_DSTATE_SCANNING || state == IEC_DSTATE_RAW_OK) {
        iec_jpeg_entropy_install(cinfo, entropy);
    }
}

/// Stops the call when the stop probe says so, and rejects progressive files with absurd scan
/// counts: each scan re-walks the whole coefficient buffer, so a few KB of crafted scans can
/// cost minutes of CPU.
/// It is also where the engine's entropy decoders take over (see above).
static void iec_jpeg_monitor_progress(j_common_ptr cinfo) {
    iec_jpeg_monitor *monitor = (iec_jpeg_monitor *)cinfo->progress;
    iec_jpeg_error *error = (iec_jpeg_error *)cinfo->err;
    iec_jpeg_take_over_scans(cinfo, monitor->entropy);
    if (monitor->stop != NULL && monitor->stop()) {
        strncpy(error->message, "Stopped: its task was cancelled", IEC_MESSAGE_MAX);
        error->status = IEC_CANCELLED;
        longjmp(error->jump, 1);
    }
    if (monitor->max_scans > 0 && cinfo->is_decompressor &&
        ((j_decompress_ptr)cinfo)->input_scan_number > monitor->max_scans) {
        snprintf(error->message, IEC_MESSAGE_MAX, "Progressive JPEG has more than %d scans", monitor->max_scans);
        error->status = IEC_ERROR;
        longjmp(error->jump, 1);
    }
}

/// Points cinfo at `monitor`: after jpeg_create_*, which clears cinfo->progress.
static void iec_jpeg_install_monitor(j_common_ptr cinfo, iec_jpeg_monitor *monitor, iec_stop_probe stop,
                                     int max_scans) {
    monitor->pub.progress_monitor = iec_jpeg_monitor_progress;
    monitor->stop = stop;
    monitor->max_scans = max_scans;
    monitor->entropy = NULL;
    cinfo->progress = &monitor->pub;
}

iec_jpeg_decoder *iec_jpeg_decoder_create(const uint8_t *data, size_t size, int strict,
                                          long max_memory, int max_scans, size_t max_icc_bytes,
                                          iec_stop_probe stop) {
    iec_jpeg_decoder *decoder = calloc(1, sizeof(iec_jpeg_decoder));
    if (decoder == NULL) return NULL;
    iec_jpeg_error_init(&decoder->error, strict);
    decoder->cinfo.err = &decoder->error.pub;
    decoder->max_icc_bytes = max_icc_bytes;
    decoder->data = data;
    decoder->size = size;
    if (setjmp(decoder->error.jump)) return decoder;
    jpeg_create_decompress(&decoder->cinfo);
    decoder->created = 1;
    iec_jpeg_install_counting(decoder);
    decoder->cinfo.mem->max_memory_to_use = max_memory;
    iec_jpeg_install_monitor((j_common_ptr)&decoder->cinfo, &decoder->monitor, stop, max_scans);
    decoder->entropy.enabled = 1;
    decoder->monitor.entropy = &decoder->entropy;
    jpeg_set_marker_processor(&decoder->cinfo, JPEG_APP0 + 1, iec_jpeg_read_app_marker);
    jpeg_set_marker_processor(&decoder->cinfo, JPEG_APP0 + 2, iec_jpeg_read_app_marker);
    // Casting away const: libjpeg's memory source never writes to the buffer.
    jpeg_mem_src(&decoder->cinfo, (unsigned char *)data, (unsigned long)size);
    return decoder;
}

void iec_jpeg_decoder_rebase(iec_jpeg_decoder *decoder, const uint8_t *data, size_t size) {
    struct jpeg_source_mgr *source = decoder->cinfo.src;
    if (!decoder->created || source == NULL || data == decoder->data) return;
    // jpeg_mem_src's manager reads from next_input_byte, bytes_in_buffer ahead: keep the offset.
    // Past the end it reads from its own fake EOI instead, which does not move.
    const JOCTET *old = (const JOCTET *)decoder->data;
    if (source->next_input_byte >= old && source->next_input_byte <= old + decoder->size && size == decoder->size) {
        size_t consumed = (size_t)(source->next_input_byte - old);
        source->next_input_byte = (const JOCTET *)data + consumed;
        source->bytes_in_buffer = size - consumed;
    }
    decoder->data = data;
    decoder->size = size;
}

iec_memory_usage iec_jpeg_decoder_memory(const iec_jpeg_decoder *decoder) { return decoder->memory; }

void iec_jpeg_decoder_set_memory_limit(iec_jpeg_decoder *decoder, size_t limit) {
    decoder->memory.limit = limit;
    decoder->memory.peak = decoder->memory.current;
}

int iec_jpeg_decoder_icc_dropped(const iec_jpeg_decoder *decoder) { return decoder->icc_dropped; }

size_t iec_jpeg_decoder_icc_bytes(const iec_jpeg_decoder *decoder) { return decoder->icc_bytes; }

void iec_jpeg_decoder_set_strict(iec_jpeg_decoder *decoder, int strict) { decoder->error.strict = strict; }

void iec_jpeg_decoder_use_library_entropy(iec_jpeg_decoder *decoder) { decoder->entropy.enabled = 0; }

int iec_jpeg_decoder_decodes_entropy(const iec_jpeg_decoder *decoder) { return decoder->entropy.installed; }

void iec_jpeg_decoder_destroy(iec_jpeg_decoder *decoder) {
    if (decoder == NULL) return;
    if (decoder->created) jpeg_destroy_decompress(&decoder->cinfo);
    free(decoder);
}

struct jpeg_decompress_struct *iec_jpeg_decoder_info(iec_jpeg_decoder *decoder) {
    return &decoder->cinfo;
}

const char *iec_jpeg_decoder_message(const iec_jpeg_decoder *decoder) {
    return decoder->error.message;
}

int iec_jpeg_decoder_warning_count(const iec_jpeg_decoder *decoder) {
    return decoder->error.warnings;
}

int iec_jpeg_decoder_message_code(const iec_jpeg_decoder *decoder) { return decoder->error.code; }

int iec_jpeg_decoder_saw_truncation(const iec_jpeg_decoder *decoder) {
    return decoder->error.truncated;
}

int iec_jpeg_decoder_recorded_warnings(const iec_jpeg_decoder *decoder) { return decoder->error.recorded; }

int iec_jpeg_decoder_warning_code(const iec_jpeg_decoder *decoder, int index) {
    return index >= 0 && index < decoder->error.recorded ? decoder->error.warning_codes[index] : 0;
}

const char *iec_jpeg_decoder_warning_message(const iec_jpeg_decoder *decoder, int index) {
    return index >= 0 && index < decoder->error.recorded ? decoder->error.warning_messages[index] : "";
}

iec_status iec_jpeg_decoder_status(const iec_jpeg_decoder *decoder) {
    return decoder->error.status;
}

iec_status iec_jpeg_read_header(iec_jpeg_decoder *decoder) {
    if (decoder->error.status != IEC_OK) return decoder->error.status;
    if (setjmp(decoder->error.jump)) return decoder->error.status;
    decoder->error.reading_header = 1;
    int result = jpeg_read_header(&decoder->cinfo, TRUE);
    decoder->error.reading_header = 0;
    if (decoder->error.truncated_in_header) {
        // A lenient decoder got past the end of the data inside the header (libjpeg inserted
        // an EOI): whatever it read next, the file is cut short.
        snprintf(decoder->error.message, IEC_MESSAGE_MAX, "Premature end of JPEG file in the header");
        decoder->error.status = IEC_TRUNCATED;
    } else if (result != JPEG_HEADER_OK) {
        snprintf(decoder->error.message, IEC_MESSAGE_MAX, "JPEG datastream contains no image");
        decoder->error.status = IEC_ERROR;
    }
    return decoder->error.status;
}

iec_status iec_jpeg_calc_output_dimensions(iec_jpeg_decoder *decoder) {
    if (setjmp(decoder->error.jump)) return decoder->error.status;
    jpeg_calc_output_dimensions(&decoder->cinfo);
    return IEC_OK;
}

iec_status iec_jpeg_read_icc_profile(iec_jpeg_decoder *decoder, uint8_t **profile,
                                     unsigned int *length) {
    *profile = NULL;
    *length = 0;
    if (setjmp(decoder->error.jump)) return decoder->error.status;
    JOCTET *buffer = NULL;
    unsigned int size = 0;
    if (jpeg_read_icc_profile(&decoder->cinfo, &buffer, &size)) {
        *profile = buffer;
        *length = size;
    }
    return IEC_OK;
}

iec_status iec_jpeg_start_decompress(iec_jpeg_decoder *decoder) {
    if (setjmp(decoder->error.jump)) return decoder->error.status;
    jpeg_start_decompress(&decoder->cinfo);
    iec_jpeg_take_over_scans((j_common_ptr)&decoder->cinfo, &decoder->entropy);
    return IEC_OK;
}

iec_status iec_jpeg_read_scanlines(iec_jpeg_decoder *decoder, uint8_t **rows, unsigned int max_rows,
                                   unsigned int *rows_read) {
    *rows_read = 0;
    if (setjmp(decoder->error.jump)) return decoder->error.status;
    *rows_read = jpeg_read_scanlines(&decoder->cinfo, rows, max_rows);
    return IEC_OK;
}

iec_status iec_jpeg_crop_scanline(iec_jpeg_decoder *decoder, unsigned int *xoffset, unsigned int *width) {
    if (setjmp(decoder->error.jump)) return decoder->error.status;
    JDIMENSION offset = *xoffset, span = *width;
    jpeg_crop_scanline(&decoder->cinfo, &offset, &span);
    *xoffset = offset;
    *width = span;
    return IEC_OK;
}

iec_status iec_jpeg_skip_scanlines(iec_jpeg_decoder *decoder, unsigned int count, unsigned int *skipped) {
    *skipped = 0;
    if (setjmp(decoder->error.jump)) return decoder->error.status;
    *skipped = jpeg_skip_scanlines(&decoder->cinfo, count);
    return IEC_OK;
}

iec_status iec_jpeg_finish_decompress(iec_jpeg_decoder *decoder) {
    if (setjmp(decoder->error.jump)) return decoder->error.status;
    jpeg_finish_decompress(&decoder->cinfo);
    return IEC_OK;
}

/// libjpeg keeps the inverse DCT of each component in an internal struct (jpegint.h, not
/// installed). Its head, a start_pass pointer followed by one method per component, is the same
/// in libjpeg 6b and every libjpeg-turbo release (newer ones only append members); libjpeg reads
/// the method from it for every iMCU row it decodes.
struct jpeg_inverse_dct {
    void (*start_pass)(j_decompress_ptr cinfo);
    iec_jpeg_idct_method inverse_DCT[MAX_COMPONENTS];
};

int iec_jpeg_replace_idct(iec_jpeg_decoder *decoder, int index, iec_jpeg_idct_method method) {
    j_decompress_ptr cinfo = &decoder->cinfo;
    if (cinfo->idct == NULL || index < 0 || index >= cinfo->num_components || index >= MAX_COMPONENTS) return 0;
    if (cinfo->comp_info[index].quant_table == NULL) return 0;
    cinfo->idct->inverse_DCT[index] = method;
    return 1;
}

/// The engine's scaled IDCT (CImageKernels) in libjpeg's shape, one per version so the choice is
/// made once per decode: the size is the component's, the quantization table the one latched
/// for it (replacement requires it).
static void scaled_idct_avx2(j_decompress_ptr cinfo, jpeg_component_info *component, JCOEFPTR coefficients, JSAMPARRAY output,
                             JDIMENSION output_column) {
    (void)cinfo;
    iec_idct_scaled_avx2(component->DCT_scaled_size, coefficients, component->quant_table->quantval, (unsigned char *const *)output,
                         output_column);
}

static void scaled_idct_portable(j_decompress_ptr cinfo, jpeg_component_info *component, JCOEFPTR coefficients, JSAMPARRAY output,
                                 JDIMENSION output_column) {
    (void)cinfo;
    iec_idct_scaled_portable(component->DCT_scaled_size, coefficients, component->quant_table->quantval,
                             (unsigned char *const *)output, output_column);
}

iec_jpeg_idct_method iec_jpeg_scaled_idct(int size) {
    if (!iec_idct_scaled_supports(size)) return NULL;
    return iec_kernels_level() == 1 ? scaled_idct_avx2 : scaled_idct_portable;
}

// MARK: - Encoder

/// A growable memory destination the shim owns (instead of jpeg_mem_dest, whose buffer changes
/// hands when it grows: freeing the original after an error mid-encode was a double free).
/// After a longjmp the buffer is freed exactly once, by whoever owns it then.
typedef struct {
    struct jpeg_destination_mgr pub;
    uint8_t *bytes;
    size_t capacity;
    size_t limit;
} iec_jpeg_destination;

static void iec_jpeg_init_destination(j_compress_ptr cinfo) {
    iec_jpeg_destination *destination = (iec_jpeg_destination *)cinfo->dest;
    destination->pub.next_output_byte = destination->bytes;
    destination->pub.free_in_buffer = destination->capacity;
}

static boolean iec_jpeg_empty_output_buffer(j_compress_ptr cinfo) {
    iec_jpeg_destination *destination = (iec_jpeg_destination *)cinfo->dest;
    size_t used = destination->capacity;
    size_t capacity = used > SIZE_MAX / 2 ? SIZE_MAX : used * 2;
    if (capacity > destination->limit) capacity = destination->limit;
    uint8_t *grown = capacity > used ? realloc(destination->bytes, capacity) : NULL;
    // On failure the old buffer stays owned by the destination and is freed by the caller.
    if (grown == NULL) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 10);
    destination->bytes = grown;
    destination->capacity = capacity;
    destination->pub.next_output_byte = grown + used;
    destination->pub.free_in_buffer = capacity - used;
    return TRUE;
}

static void iec_jpeg_term_destination(j_compress_ptr cinfo) { (void)cinfo; }

iec_status iec_jpeg_encode(const iec_jpeg_encode_params *params, const uint8_t *pixels,
                           size_t bytes_per_row, uint8_t **output, unsigned long *output_length,
                           char message[IEC_MESSAGE_MAX]) {
    // Read after a longjmp: in memory the compiler cannot cache in a register.
    struct jpeg_compress_struct cinfo;
    iec_jpeg_error error;
    iec_jpeg_monitor monitor;
    volatile iec_jpeg_destination destination;
    volatile int created = 0;

    *output = NULL;
    *output_length = 0;
    memset((void *)&destination, 0, sizeof(destination));
    destination.limit = params->max_output_bytes > 0 ? params->max_output_bytes : SIZE_MAX;
    destination.capacity = destination.limit < 65536 ? destination.limit : 65536;
    destination.bytes = malloc(destination.capacity > 0 ? destination.capacity : 1);
    if (destination.bytes == NULL) {
        strncpy(message, "Out of memory for the JPEG output", IEC_MESSAGE_MAX);
        return IEC_OUT_OF_MEMORY;
    }
    destination.pub.init_destination = iec_jpeg_init_destination;
    destination.pub.empty_output_buffer = iec_jpeg_empty_output_buffer;
    destination.pub.term_destination = iec_jpeg_term_destination;
    iec_jpeg_error_init(&error, 0);
    cinfo.err = &error.pub;
    if (setjmp(error.jump)) {
        strncpy(message, error.message, IEC_MESSAGE_MAX);
        message[IEC_MESSAGE_MAX - 1] = '\0';
        if (created) jpeg_destroy_compress(&cinfo);
        free(destination.bytes);
        return error.status;
    }
    jpeg_create_compress(&cinfo);
    created = 1;
    iec_jpeg_install_monitor((j_common_ptr)&cinfo, &monitor, params->stop, 0);
    cinfo.dest = (struct jpeg_destination_mgr *)&destination;
    cinfo.image_width = params->width;
    cinfo.image_height = params->height;
    cinfo.input_components = params->components;
    cinfo.in_color_space = params->components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&cinfo);
    if (params->chroma_quality > 0 && params->chroma_quality != params->quality) {
        // libjpeg keeps its standard chroma table private: let it scale the table to the chroma
        // quality, keep the result, then set the luma quality and put the chroma steps back.
        jpeg_set_quality(&cinfo, params->chroma_quality, TRUE);
        UINT16 chroma[DCTSIZE2];
        memcpy(chroma, cinfo.quant_tbl_ptrs[1]->quantval, sizeof chroma);
        jpeg_set_quality(&cinfo, params->quality, TRUE);
        memcpy(cinfo.quant_tbl_ptrs[1]->quantval, chroma, sizeof chroma);
    } else {
        jpeg_set_quality(&cinfo, params->quality, TRUE);
    }
    if (params->luma_quant_table != NULL) {
        jpeg_add_quant_table(&cinfo, 0, params->luma_quant_table, jpeg_quality_scaling(params->quality), TRUE);
    }
    cinfo.optimize_coding = params->optimize_coding ? TRUE : FALSE;
    if (params->components == 3) {
        cinfo.comp_info[0].h_samp_factor = params->luma_h_samp;
        cinfo.comp_info[0].v_samp_factor = params->luma_v_samp;
        cinfo.comp_info[1].h_samp_factor = 1;
        cinfo.comp_info[1].v_samp_factor = 1;
        cinfo.comp_info[2].h_samp_factor = 1;
        cinfo.comp_info[2].v_samp_factor = 1;
    }
    if (params->progressive) jpeg_simple_progression(&cinfo);
    jpeg_start_compress(&cinfo, TRUE);
    if (params->icc_profile != NULL && params->icc_length > 0) {
        jpeg_write_icc_profile(&cinfo, params->icc_profile, params->icc_length);
    }
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = (JSAMPROW)(pixels + (size_t)cinfo.next_scanline * bytes_per_row);
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    size_t length = destination.capacity - destination.pub.free_in_buffer;
    jpeg_destroy_compress(&cinfo);
    *output = destination.bytes;
    *output_length = length;
    return IEC_OK;
}

// MARK: - Encoder from coefficients

struct iec_jpeg_coefficient_encoder {
    struct jpeg_compress_struct cinfo;
    iec_jpeg_error error;
    iec_jpeg_monitor monitor;
    iec_jpeg_destination destination;
    jvirt_barray_ptr arrays[3];
    unsigned int blocks_wide[3];
    unsigned int blocks_high[3];
    int components;
    int created;
    iec_status status;
};

static unsigned int iec_ceil_div(uint64_t numerator, uint64_t denominator) {
    return (unsigned int)((numerator + denominator - 1) / denominator);
}

iec_jpeg_coefficient_encoder *iec_jpeg_coefficient_encoder_create(const iec_jpeg_coefficient_params *params) {
    iec_jpeg_coefficient_encoder *encoder = calloc(1, sizeof(*encoder));
    if (encoder == NULL) return NULL;
    iec_jpeg_error_init(&encoder->error, 0);
    encoder->status = IEC_OK;
    iec_jpeg_destination *destination = &encoder->destination;
    destination->limit = params->max_output_bytes > 0 ? params->max_output_bytes : SIZE_MAX;
    destination->capacity = destination->limit < 65536 ? destination->limit : 65536;
    destination->bytes = malloc(destination->capacity > 0 ? destination->capacity : 1);
    if (destination->bytes == NULL) {
        strncpy(encoder->error.message, "Out of memory for the JPEG output", IEC_MESSAGE_MAX);
        encoder->status = IEC_OUT_OF_MEMORY;
        return encoder;
    }
    destination->pub.init_destination = iec_jpeg_init_destination;
    destination->pub.empty_output_buffer = iec_jpeg_empty_output_buffer;
    destination->pub.term_destination = iec_jpeg_term_destination;
    if (params->components != 1 && params->components != 3) {
        strncpy(encoder->error.message, "A JPEG is written with 1 or 3 components", IEC_MESSAGE_MAX);
        encoder->status = IEC_ERROR;
        return encoder;
    }
    struct jpeg_compress_struct *cinfo = &encoder->cinfo;
    cinfo->err = &encoder->error.pub;
    if (setjmp(encoder->error.jump)) {
        encoder->status = encoder->error.status;
        return encoder;
    }
    jpeg_create_compress(cinfo);
    encoder->created = 1;
    iec_jpeg_install_monitor((j_common_ptr)cinfo, &encoder->monitor, params->stop, 0);
    encoder->components = params->components;
    cinfo->dest = &destination->pub;
    cinfo->image_width = params->width;
    cinfo->image_height = params->height;
    cinfo->input_components = params->components;
    cinfo->in_color_space = params->components == 1 ? JCS_GRAYSCALE : JCS_YCbCr;
    jpeg_set_defaults(cinfo);
    jpeg_add_quant_table(cinfo, 0, params->luma_quant_table, 100, TRUE);
    if (params->components == 3) {
        jpeg_add_quant_table(cinfo, 1, params->chroma_quant_table, 100, TRUE);
        cinfo->comp_info[0].h_samp_factor = params->luma_h_samp;
        cinfo->comp_info[0].v_samp_factor = params->luma_v_samp;
        for (int index = 1; index < 3; index++) {
            cinfo->comp_info[index].h_samp_factor = 1;
            cinfo->comp_info[index].v_samp_factor = 1;
            cinfo->comp_info[index].quant_tbl_no = 1;
        }
    }
    cinfo->optimize_coding = TRUE;
    if (params->progressive) jpeg_simple_progression(cinfo);
    int max_h = params->components == 3 ? params->luma_h_samp : 1;
    int max_v = params->components == 3 ? params->luma_v_samp : 1;
    for (int index = 0; index < params->components; index++) {
        jpeg_component_info *component = &cinfo->comp_info[index];
        int h = component->h_samp_factor, v = component->v_samp_factor;
        // Blocks that hold image samples (libjpeg's width_in_blocks), rounded up to whole MCUs.
        unsigned int wide = iec_ceil_div((uint64_t)params->width * h, (uint64_t)max_h * DCTSIZE);
        unsigned int high = iec_ceil_div((uint64_t)params->height * v, (uint64_t)max_v * DCTSIZE);
        encoder->blocks_wide[index] = iec_ceil_div(wide, h) * h;
        encoder->blocks_high[index] = iec_ceil_div(high, v) * v;
        // Not zeroed first: the encoder writes every block of every row before finishing.
        encoder->arrays[index] = (*cinfo->mem->request_virt_barray)(
            (j_common_ptr)cinfo, JPOOL_IMAGE, FALSE, encoder->blocks_wide[index], encoder->blocks_high[index], v);
    }
    // Realizes the arrays and writes SOI; the tables, frame and scans follow in finish.
    jpeg_write_coefficients(cinfo, encoder->arrays);
    if (params->icc_profile != NULL && params->icc_length > 0) {
        jpeg_write_icc_profile(cinfo, params->icc_profile, params->icc_length);
    }
    return encoder;
}

iec_status iec_jpeg_coefficient_encoder_status(const iec_jpeg_coefficient_encoder *encoder) { return encoder->status; }

const char *iec_jpeg_coefficient_encoder_message(const iec_jpeg_coefficient_encoder *encoder) {
    return encoder->error.message;
}

unsigned int iec_jpeg_coefficient_blocks_wide(const iec_jpeg_coefficient_encoder *encoder, int component) {
    return component >= 0 && component < encoder->components ? encoder->blocks_wide[component] : 0;
}

unsigned int iec_jpeg_coefficient_blocks_high(const iec_jpeg_coefficient_encoder *encoder, int component) {
    return component >= 0 && component < encoder->components ? encoder->blocks_high[component] : 0;
}

iec_status iec_jpeg_coefficient_row(iec_jpeg_coefficient_encoder *encoder, int component, unsigned int row,
                                    JCOEF **blocks) {
    *blocks = NULL;
    if (encoder->status != IEC_OK) return encoder->status;
    if (component < 0 || component >= encoder->components || row >= encoder->blocks_high[component]) {
        strncpy(encoder->error.message, "Coefficient row out of range", IEC_MESSAGE_MAX);
        return IEC_ERROR;
    }
    if (setjmp(encoder->error.jump)) {
        encoder->status = encoder->error.status;
        return encoder->status;
    }
    JBLOCKARRAY rows = (*encoder->cinfo.mem->access_virt_barray)((j_common_ptr)&encoder->cinfo,
                                                                 encoder->arrays[component], row, 1, TRUE);
    *blocks = rows[0][0];
    return IEC_OK;
}

iec_status iec_jpeg_coefficient_encoder_finish(iec_jpeg_coefficient_encoder *encoder, uint8_t **output,
                                               unsigned long *output_length) {
    *output = NULL;
    *output_length = 0;
    if (encoder->status != IEC_OK) return encoder->status;
    if (setjmp(encoder->error.jump)) {
        encoder->status = encoder->error.status;
        return encoder->status;
    }
    jpeg_finish_compress(&encoder->cinfo);
    iec_jpeg_destination *destination = &encoder->destination;
    *output_length = destination->capacity - destination->pub.free_in_buffer;
    *output = destination->bytes;
    destination->bytes = NULL;
    // Finished: a second call would have nothing to write.
    encoder->status = IEC_ERROR;
    strncpy(encoder->error.message, "The encoder has finished", IEC_MESSAGE_MAX);
    return IEC_OK;
}

void iec_jpeg_coefficient_encoder_destroy(iec_jpeg_coefficient_encoder *encoder) {
    if (encoder == NULL) return;
    if (encoder->created) jpeg_destroy_compress(&encoder->cinfo);
    free(encoder->destination.bytes);
    free(encoder);
}
