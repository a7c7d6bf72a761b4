// The engine's entropy decoders for Huffman-coded JPEG scans, which jpeg_shim.c puts in place of
// libjpeg's before a decode reads any scan data: jpeg_sequential.c for sequential scans (in
// place of libjpeg's jdhuff.c), jpeg_progressive.c for progressive ones (jdphuff.c). What they
// share is here and in jpeg_entropy.c: the Huffman tables, the bit reader, restarts, and how
// data that ends early is met.
#ifndef IEC_JPEG_ENTROPY_H
#define IEC_JPEG_ENTROPY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>

#define IEC_HOT inline __attribute__((always_inline))

/// Codes of up to this many bits are found with one table lookup.
#define IEC_HUFFMAN_LOOKUP_BITS 9
/// A sequential scan's AC codes of up to this many bits, with their extra bits when those fit
/// too, are found with one lookup in iec_huffman_table.joint.
#define IEC_HUFFMAN_JOINT_BITS 10

/// One Huffman table (T.81 annex C) ready for decoding.
typedef struct {
    /// Indexed by the next IEC_HUFFMAN_LOOKUP_BITS bits: (code length << 8) | symbol for a code
    /// that short, 0 for a longer one.
    uint16_t lookup[1 << IEC_HUFFMAN_LOOKUP_BITS];
    /// By code length 1...16: the largest code of that length (-1: none), and what turns a
    /// code of that length into its symbol's index; [17] ends every search.
    int32_t max_code[18];
    int32_t value_offset[17];
    uint8_t symbols[256];
    /// Sequential AC tables only, indexed by the next IEC_HUFFMAN_JOINT_BITS bits; 0 for a
    /// longer code. Otherwise bits 0-4 are how many bits to consume and bits 8-15 the symbol;
    /// with IEC_JOINT_VALUE set, those bits were the code and its extra bits, and bits 16-31
    /// are the coefficient's signed value.
    int32_t joint[1 << IEC_HUFFMAN_JOINT_BITS];
} iec_huffman_table;

#define IEC_JOINT_VALUE 0x20

/// Bits of the current scan's entropy-coded data, most significant first.
typedef struct {
    uint64_t bits;
    /// Bits held in `bits`.
    int count;
    /// Of those, the last ones that are zeros after a marker rather than data. A decode has
    /// used bits past the data once fewer bits than these are left.
    int padding;
} iec_bit_reader;

/// What the decoders keep between MCUs; one per decode, inside the shim's decoder.
typedef struct {
    /// 0: libjpeg's own decoders stay (for comparisons); set before decoding starts.
    int enabled;
    int installed;
    /// Refinement scans find runs with pdep (iec_kernels_fast_bit_deposit); the same
    /// coefficients either way.
    int fast_bit_deposit;
    void (*library_start_pass)(j_decompress_ptr cinfo);
    /// Builds the tables of the scan libjpeg has just started and points decode_mcu at its
    /// decoder: iec_jpeg_progressive_start_scan or iec_jpeg_sequential_start_scan.
    void (*start_scan)(j_decompress_ptr cinfo);
    iec_bit_reader reader;
    unsigned int eob_run;
    unsigned int restarts_to_go;
    int last_dc[MAX_COMPS_IN_SCAN];
    /// Progressive DC scans and sequential scans: each component's DC table; progressive AC
    /// scans: [0].
    iec_huffman_table tables[MAX_COMPS_IN_SCAN];
    /// Sequential scans: each component's AC table.
    iec_huffman_table ac_tables[MAX_COMPS_IN_SCAN];
    /// Sequential scans, by block of the MCU: its component in the scan, and whether its DC and
    /// AC coefficients are kept (libjpeg's component_needed, and no ACs at 1/8 scale).
    unsigned char block_component[D_MAX_BLOCKS_IN_MCU];
    unsigned char dc_kept[D_MAX_BLOCKS_IN_MCU];
    unsigned char ac_kept[D_MAX_BLOCKS_IN_MCU];
    /// Sequential scans: MCUs left before the decoder calls libjpeg's progress monitor itself.
    unsigned int mcus_to_monitor;
} iec_jpeg_entropy;

/// How often a sequential decode calls the progress monitor (where the shim checks for
/// cancellation) from inside the scan: jpeg_skip_scanlines reads every MCU of the rows it skips
/// without calling it. 4096 MCUs are a few milliseconds of a photo's data.
#define IEC_MCUS_PER_MONITOR 4096

/// Puts the engine's decoders in place of libjpeg's for every scan from the current one on.
/// Call once the decoder's master setup is done and before any scan data is read (libjpeg has
/// already started the first scan, which this starts again): `cinfo` must be Huffman-coded and
/// read from a source that never suspends.
void iec_jpeg_entropy_install(j_decompress_ptr cinfo, iec_jpeg_entropy *state);

// MARK: What the two decoders share

// The heads of two libjpeg structs that jpeglib.h only declares (jpegint.h, not installed
// everywhere). Both have been these fields, in this order, since IJG 6b.
struct jpeg_entropy_decoder {
    void (*start_pass)(j_decompress_ptr cinfo);
    boolean (*decode_mcu)(j_decompress_ptr cinfo, JBLOCKROW *MCU_data);
    boolean insufficient_data;
};

struct jpeg_marker_reader {
    void (*reset_marker_reader)(j_decompress_ptr cinfo);
    int (*read_markers)(j_decompress_ptr cinfo);
    jpeg_marker_parser_method read_restart_marker;
    boolean saw_SOI;
    boolean saw_SOF;
    int next_restart_num;
    unsigned int discarded_bytes;
};

/// Zigzag position → position in the block (T.81 figure A.6). A run in damaged data can carry
/// the position up to 63 + 15 + 1; those land on the last coefficient, as in libjpeg.
extern const unsigned char iec_jpeg_natural_order[80] __attribute__((visibility("hidden")));

static inline iec_jpeg_entropy *iec_entropy_state(j_decompress_ptr cinfo) { return (iec_jpeg_entropy *)cinfo->client_data; }

/// Builds `table` from libjpeg's table `number` of `sources` (BITS and HUFFVAL, T.81 annex C),
/// with its joint lookup when `joint` is set. libjpeg has already checked the table for this
/// scan; the checks here keep every index in bounds whatever it holds.
void iec_huffman_build(j_decompress_ptr cinfo, JHUFF_TBL *const *sources, int number, int joint, iec_huffman_table *table);

/// The reader topped up to at least 57 bits a byte at a time, where the next 8 bytes hold a
/// 0xFF (a stuffed 0xFF00 or a marker) or are not all there: data bytes while there are any,
/// zeros after a marker. By value, so that a decoder's reader can live in registers.
iec_bit_reader iec_bits_refill(j_decompress_ptr cinfo, iec_bit_reader reader);

/// What starts again at a scan's start and after each restart marker (T.81 F.2.1.3): the bit
/// reader, the DC predictions, the end-of-band run and the count to the next restart.
void iec_entropy_start_interval(j_decompress_ptr cinfo, iec_jpeg_entropy *state);

/// At a restart interval's end: the rest of the last byte is padding and the marker must be the
/// next RSTn.
void iec_entropy_restart(j_decompress_ptr cinfo, iec_jpeg_entropy *state);

/// Build the tables of the scan libjpeg has just started and point decode_mcu at its decoder
/// (jpeg_progressive.c and jpeg_sequential.c); the state is reset and the scan's component
/// count checked before.
void iec_jpeg_progressive_start_scan(j_decompress_ptr cinfo);
void iec_jpeg_sequential_start_scan(j_decompress_ptr cinfo);

/// Whether any of the eight bytes is 0xFF.
static IEC_HOT int iec_bits_has_ff(uint64_t word) {
    const uint64_t inverted = ~word;
    return ((inverted - 0x0101010101010101ULL) & ~inverted & 0x8080808080808080ULL) != 0;
}

/// At least 32 bits in the reader (57 after a refill): enough for a code and its extra bits
/// (16 + 15), or 32 correction bits. Most refills take the next 4 to 8 bytes at once, here:
/// a call for each was a seventh of a baseline photo's decode.
static IEC_HOT void iec_bits_ensure(j_decompress_ptr cinfo, iec_bit_reader *reader) {
    if (reader->count >= 32) return;
    struct jpeg_source_mgr *source = cinfo->src;
    if (cinfo->unread_marker == 0 && source->bytes_in_buffer >= 8) {
        uint64_t word;
        memcpy(&word, source->next_input_byte, 8);
        if (!iec_bits_has_ff(word)) {
            // The whole bytes that fit below the bits held, most significant first.
            const int take = (64 - reader->count) / 8;
            word = __builtin_bswap64(word);
            reader->bits |= (word >> (64 - 8 * take)) << (64 - reader->count - 8 * take);
            reader->count += 8 * take;
            source->next_input_byte += take;
            source->bytes_in_buffer -= (size_t)take;
            return;
        }
    }
    *reader = iec_bits_refill(cinfo, *reader);
}

/// Drops `n` bits (n ≤ 32, with iec_bits_ensure before). Bits past the data are zeros, and
/// iec_entropy_check_data says when they have been used.
static IEC_HOT void iec_bits_consume(iec_bit_reader *reader, int n) {
    reader->bits <<= n;
    reader->count -= n;
}

/// The next `n` bits as a number (1 ≤ n ≤ 16).
static IEC_HOT unsigned int iec_bits_take(iec_bit_reader *reader, int n) {
    const unsigned int value = (unsigned int)(reader->bits >> (64 - n));
    iec_bits_consume(reader, n);
    return value;
}

/// The first time a scan has used bits past its data: libjpeg's warning that the data ended
/// early, and the MCUs after this one are skipped (libjpeg finishes the MCU with zeros, as the
/// decoders here do). Called at the end of every MCU and before any other warning, so the
/// warnings come in libjpeg's order.
static IEC_HOT void iec_entropy_check_data(j_decompress_ptr cinfo, iec_bit_reader *reader) {
    if (reader->count >= reader->padding) return;
    reader->padding = reader->count;
    if (!cinfo->entropy->insufficient_data) {
        WARNMS(cinfo, JWRN_HIT_MARKER);
        cinfo->entropy->insufficient_data = TRUE;
    }
}

/// The symbol of a code longer than the table's lookup, searched from `length` bits on. A code
/// no table has (17 bits tried) is libjpeg's warning and a symbol of 0.
static IEC_HOT int iec_huffman_decode_long(j_decompress_ptr cinfo, iec_bit_reader *reader, const iec_huffman_table *table, int length) {
    for (; length <= 16; length++) {
        const int32_t code = (int32_t)(reader->bits >> (64 - length));
        if (code <= table->max_code[length]) {
            iec_bits_consume(reader, length);
            return table->symbols[(code + table->value_offset[length]) & 0xFF];
        }
    }
    iec_bits_consume(reader, 17);
    iec_entropy_check_data(cinfo, reader);
    WARNMS(cinfo, JWRN_HUFF_BAD_CODE);
    return 0;
}

/// The next Huffman-coded symbol (with iec_bits_ensure before).
static IEC_HOT int iec_huffman_decode(j_decompress_ptr cinfo, iec_bit_reader *reader, const iec_huffman_table *table) {
    const unsigned int entry = table->lookup[reader->bits >> (64 - IEC_HUFFMAN_LOOKUP_BITS)];
    if (entry != 0) {
        iec_bits_consume(reader, (int)(entry >> 8));
        return (int)(entry & 0xFF);
    }
    return iec_huffman_decode_long(cinfo, reader, table, IEC_HUFFMAN_LOOKUP_BITS + 1);
}

/// The signed value of `size` extra bits (T.81 F.2.2.1, EXTEND).
static IEC_HOT int iec_huffman_extend(unsigned int bits, int size) {
    return bits < (1u << (size - 1)) ? (int)bits - (int)((1u << size) - 1) : (int)bits;
}

/// A block's DC difference (T.81 F.2.2.1): its size's code, then that many extra bits.
static IEC_HOT int iec_huffman_dc_difference(j_decompress_ptr cinfo, iec_bit_reader *reader, const iec_huffman_table *table) {
    iec_bits_ensure(cinfo, reader);
    const int size = iec_huffman_decode(cinfo, reader, table) & 15;
    return size != 0 ? iec_huffman_extend(iec_bits_take(reader, size), size) : 0;
}

/// Before an MCU: the restart marker, when an interval has ended.
static IEC_HOT void iec_entropy_begin_mcu(j_decompress_ptr cinfo, iec_jpeg_entropy *state) {
    if (cinfo->restart_interval != 0 && state->restarts_to_go == 0) iec_entropy_restart(cinfo, state);
}

/// After an MCU: the warning if it used bits past the data, and one MCU less to the restart.
static IEC_HOT boolean iec_entropy_end_mcu(j_decompress_ptr cinfo, iec_jpeg_entropy *state) {
    iec_entropy_check_data(cinfo, &state->reader);
    state->restarts_to_go--;
    return TRUE;
}

/// A DC prediction plus a difference, or libjpeg's error for a sum past int (only a crafted
/// file gets there).
static IEC_HOT int iec_entropy_add_dc(j_decompress_ptr cinfo, int last, int difference) {
    int sum;
    if (__builtin_add_overflow(last, difference, &sum)) ERREXIT(cinfo, JERR_BAD_DCT_COEF);
    return sum;
}

#endif
