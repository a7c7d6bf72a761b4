// Entropy decoding of progressive Huffman JPEG scans, written from ITU-T T.81: G.1.2 (DC and
// AC scans, first and refinement), F.2.2.3 and annex C (Huffman codes), F.2.2.5 (the 0xFF00
// stuffing and markers in the data). It replaces libjpeg-turbo's jdphuff.c, which reads the
// data a bit at a time through a general refill and was 45% of a batch of progressive photos'
// CPU; here the bits come 8 bytes at a time into a 64-bit register, and a code of up to 9 bits
// is one table lookup.
//
// Everything else stays libjpeg's: it parses the markers, checks each scan's parameters and
// tables (its own start_pass still runs first, and fails a bad scan as before), keeps the
// coefficient buffer and calls decode_mcu for every MCU. What a scan writes into the buffer is
// what T.81 defines, so the coefficients, and every pixel after them, are libjpeg's. Damaged
// data is met the way libjpeg meets it, so strict and lenient decodes end the same way: the
// same warnings (data that ends at a marker, a code no table has), zeros in place of the
// missing bits, an MCU skipped once its data is known to be gone, the same writes.
#include "jpeg_progressive.h"

#include "CImageKernels.h"

#include <jerror.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define HOT inline __attribute__((always_inline))

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
static const unsigned char natural_order[80] = {
    0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,  12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6,  7,  14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37,
    44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63,
};

static iec_jpeg_progressive *state_of(j_decompress_ptr cinfo) { return (iec_jpeg_progressive *)cinfo->client_data; }

// MARK: Huffman tables

/// Builds `table` from libjpeg's table `number` of `sources` (BITS and HUFFVAL, T.81 annex C).
/// libjpeg has already checked the table for this scan; the checks here keep every index in
/// bounds whatever it holds.
static void build_table(j_decompress_ptr cinfo, JHUFF_TBL *const *sources, int number, iec_huffman_table *table) {
    if (number < 0 || number >= NUM_HUFF_TBLS || sources[number] == NULL) ERREXIT1(cinfo, JERR_NO_HUFF_TABLE, number);
    const JHUFF_TBL *source = sources[number];
    memset(table->lookup, 0, sizeof table->lookup);
    int32_t code = 0;
    int index = 0;
    for (int length = 1; length <= 16; length++) {
        const int count = source->bits[length];
        if (count > 256 - index) ERREXIT(cinfo, JERR_BAD_HUFF_TABLE);
        table->value_offset[length] = index - code;
        table->max_code[length] = count > 0 ? code + count - 1 : -1;
        for (int i = 0; i < count; i++, index++, code++) {
            // Canonical codes of one length are consecutive; one past the last of all ones
            // does not fit the length.
            if (code >= ((int32_t)1 << length)) ERREXIT(cinfo, JERR_BAD_HUFF_TABLE);
            table->symbols[index] = source->huffval[index];
            if (length <= IEC_HUFFMAN_LOOKUP_BITS) {
                const int shift = IEC_HUFFMAN_LOOKUP_BITS - length;
                for (int fill = 0; fill < (1 << shift); fill++) {
                    table->lookup[(code << shift) | fill] = (uint16_t)(length << 8 | source->huffval[index]);
                }
            }
        }
        code <<= 1;
    }
    table->max_code[17] = INT32_MAX;
}

// MARK: Bits

/// The source's next byte (the memory source never suspends: past the end it gives a fake EOI).
static int next_source_byte(j_decompress_ptr cinfo) {
    struct jpeg_source_mgr *source = cinfo->src;
    if (source->bytes_in_buffer == 0 && !(*source->fill_input_buffer)(cinfo)) ERREXIT(cinfo, JERR_CANT_SUSPEND);
    source->bytes_in_buffer--;
    return *source->next_input_byte++;
}

/// The next byte of entropy-coded data, or -1 at a marker (then left in cinfo->unread_marker
/// for libjpeg's marker reader, as libjpeg's own bit reader leaves it).
static int next_data_byte(j_decompress_ptr cinfo) {
    if (cinfo->unread_marker != 0) return -1;
    const int byte = next_source_byte(cinfo);
    if (byte != 0xFF) return byte;
    // 0xFF 0x00 is a data byte 0xFF; fill bytes of 0xFF may come before a marker.
    int next;
    do {
        next = next_source_byte(cinfo);
    } while (next == 0xFF);
    if (next == 0) return 0xFF;
    cinfo->unread_marker = next;
    return -1;
}

/// Whether any of the eight bytes is 0xFF.
static HOT int has_ff(uint64_t word) {
    const uint64_t inverted = ~word;
    return ((inverted - 0x0101010101010101ULL) & ~inverted & 0x8080808080808080ULL) != 0;
}

/// Tops the reader up to at least 57 bits: data bytes while there are any, zeros after a marker.
static void refill(j_decompress_ptr cinfo, iec_bit_reader *reader) {
    struct jpeg_source_mgr *source = cinfo->src;
    if (cinfo->unread_marker == 0 && source->bytes_in_buffer >= 8) {
        uint64_t word;
        memcpy(&word, source->next_input_byte, 8);
        if (!has_ff(word)) {
            word = __builtin_bswap64(word);
            const int take = (64 - reader->count) / 8;
            reader->bits |= take == 8 ? word : (word >> (64 - 8 * take)) << (64 - reader->count - 8 * take);
            reader->count += 8 * take;
            reader->real += 8 * take;
            source->next_input_byte += take;
            source->bytes_in_buffer -= (size_t)take;
            return;
        }
    }
    while (reader->count <= 56) {
        const int byte = next_data_byte(cinfo);
        if (byte >= 0) {
            reader->bits |= (uint64_t)byte << (56 - reader->count);
            reader->real += 8;
        }
        reader->count += 8;
    }
}

/// At least 32 bits in the reader (57 after a refill): enough for a code and its extra bits
/// (16 + 15), or 32 correction bits.
static HOT void ensure(j_decompress_ptr cinfo, iec_bit_reader *reader) {
    if (reader->count < 32) refill(cinfo, reader);
}

/// Drops `n` bits (n ≤ 32, with `ensure` before). Bits past the data are zeros, and `real`
/// goes below 0 when they are used; `check_data` then says so.
static HOT void consume(iec_bit_reader *reader, int n) {
    reader->bits <<= n;
    reader->count -= n;
    reader->real -= n;
}

/// The first time a scan has used bits past its data: libjpeg's warning that the data ended
/// early, and the MCUs after this one are skipped (libjpeg finishes the MCU with zeros, as the
/// decoders here do). Called at the end of every MCU and before any other warning, so the
/// warnings come in libjpeg's order.
static HOT void check_data(j_decompress_ptr cinfo, iec_bit_reader *reader) {
    if (reader->real >= 0) return;
    reader->real = 0;
    if (!cinfo->entropy->insufficient_data) {
        WARNMS(cinfo, JWRN_HIT_MARKER);
        cinfo->entropy->insufficient_data = TRUE;
    }
}

/// The next `n` bits as a number (1 ≤ n ≤ 16).
static HOT unsigned int take(iec_bit_reader *reader, int n) {
    const unsigned int value = (unsigned int)(reader->bits >> (64 - n));
    consume(reader, n);
    return value;
}

/// The next Huffman-coded symbol. A code no table has (17 bits tried) is libjpeg's warning and
/// a symbol of 0.
static HOT int decode(j_decompress_ptr cinfo, iec_bit_reader *reader, const iec_huffman_table *table) {
    const unsigned int entry = table->lookup[reader->bits >> (64 - IEC_HUFFMAN_LOOKUP_BITS)];
    if (entry != 0) {
        consume(reader, (int)(entry >> 8));
        return (int)(entry & 0xFF);
    }
    for (int length = IEC_HUFFMAN_LOOKUP_BITS + 1; length <= 16; length++) {
        const int32_t code = (int32_t)(reader->bits >> (64 - length));
        if (code <= table->max_code[length]) {
            consume(reader, length);
            return table->symbols[(code + table->value_offset[length]) & 0xFF];
        }
    }
    consume(reader, 17);
    check_data(cinfo, reader);
    WARNMS(cinfo, JWRN_HUFF_BAD_CODE);
    return 0;
}

/// The signed value of `size` extra bits (T.81 F.2.2.1, EXTEND).
static HOT int extend(unsigned int bits, int size) {
    return bits < (1u << (size - 1)) ? (int)bits - (int)((1u << size) - 1) : (int)bits;
}

// MARK: Restarts

/// What starts again at a scan's start and after each restart marker (T.81 F.2.1.3): the bit
/// reader, the DC predictions, the end-of-band run and the count to the next restart.
static void start_interval(j_decompress_ptr cinfo, iec_jpeg_progressive *state) {
    memset(&state->reader, 0, sizeof state->reader);
    memset(state->last_dc, 0, sizeof state->last_dc);
    state->eob_run = 0;
    state->restarts_to_go = cinfo->restart_interval;
}

/// At a restart interval's end: the rest of the last byte is padding and the marker must be the
/// next RSTn. Whole bytes left unread are counted as libjpeg counts them, for its warning.
static void restart(j_decompress_ptr cinfo, iec_jpeg_progressive *state) {
    cinfo->marker->discarded_bytes += (unsigned int)(state->reader.real / 8);
    if (!(*cinfo->marker->read_restart_marker)(cinfo)) ERREXIT(cinfo, JERR_CANT_SUSPEND);
    start_interval(cinfo, state);
    // A good RSTn means the data goes on, whatever was missing before it.
    if (cinfo->unread_marker == 0) cinfo->entropy->insufficient_data = FALSE;
}

static HOT void begin_mcu(j_decompress_ptr cinfo, iec_jpeg_progressive *state) {
    if (cinfo->restart_interval != 0 && state->restarts_to_go == 0) restart(cinfo, state);
}

/// After an MCU: the warning if it used bits past the data, and one MCU less to the restart.
static HOT boolean end_mcu(j_decompress_ptr cinfo, iec_jpeg_progressive *state) {
    check_data(cinfo, &state->reader);
    state->restarts_to_go--;
    return TRUE;
}

// MARK: Scans

/// DC, first scan: each block's DC difference (T.81 F.2.2.1), added to its component's
/// prediction, scaled by 2^Al.
static boolean decode_dc_first(j_decompress_ptr cinfo, JBLOCKROW *blocks) {
    iec_jpeg_progressive *state = state_of(cinfo);
    begin_mcu(cinfo, state);
    if (!cinfo->entropy->insufficient_data) {
        iec_bit_reader *reader = &state->reader;
        for (int block = 0; block < cinfo->blocks_in_MCU; block++) {
            const int component = cinfo->MCU_membership[block];
            ensure(cinfo, reader);
            const int size = decode(cinfo, reader, &state->tables[component]) & 15;
            const int difference = size != 0 ? extend(take(reader, size), size) : 0;
            const int last = state->last_dc[component];
            if ((last >= 0 && difference > INT_MAX - last) || (last < 0 && difference < INT_MIN - last)) {
                ERREXIT(cinfo, JERR_BAD_DCT_COEF);
            }
            state->last_dc[component] = last + difference;
            blocks[block][0][0] = (JCOEF)((unsigned int)(last + difference) << cinfo->Al);
        }
    }
    return end_mcu(cinfo, state);
}

/// DC, refinement: one more bit of each block's DC (G.1.2.1). Zeros past the data change
/// nothing, so MCUs are not skipped here (libjpeg reads on as well).
static boolean decode_dc_refine(j_decompress_ptr cinfo, JBLOCKROW *blocks) {
    iec_jpeg_progressive *state = state_of(cinfo);
    begin_mcu(cinfo, state);
    iec_bit_reader *reader = &state->reader;
    const int bit = 1 << cinfo->Al;
    for (int block = 0; block < cinfo->blocks_in_MCU; block++) {
        ensure(cinfo, reader);
        blocks[block][0][0] = (JCOEF)(blocks[block][0][0] | (take(reader, 1) ? bit : 0));
    }
    return end_mcu(cinfo, state);
}

/// AC, first scan of band Ss...Se of one component (G.1.2.2): run/size symbols, zero runs of
/// 16, and end-of-band runs that cover whole blocks.
static boolean decode_ac_first(j_decompress_ptr cinfo, JBLOCKROW *blocks) {
    iec_jpeg_progressive *state = state_of(cinfo);
    begin_mcu(cinfo, state);
    if (!cinfo->entropy->insufficient_data) {
        if (state->eob_run > 0) {
            state->eob_run--;
        } else {
            iec_bit_reader *reader = &state->reader;
            const iec_huffman_table *table = &state->tables[0];
            JCOEF *block = blocks[0][0];
            const int end = cinfo->Se, shift = cinfo->Al;
            for (int k = cinfo->Ss; k <= end; k++) {
                ensure(cinfo, reader);
                const int symbol = decode(cinfo, reader, table);
                const int run = symbol >> 4, size = symbol & 15;
                if (size != 0) {
                    k += run;
                    const int value = extend(take(reader, size), size);
                    block[natural_order[k]] = (JCOEF)((unsigned int)value << shift);
                } else if (run == 15) {
                    k += 15;
                } else {
                    // EOBn: this block and 2^n - 1 + (n extra bits) more end here.
                    unsigned int blocks_left = 1u << run;
                    if (run != 0) blocks_left += take(reader, run);
                    state->eob_run = blocks_left - 1;
                    break;
                }
            }
        }
    }
    return end_mcu(cinfo, state);
}

/// Zigzag positions first ... last (first ≤ 64), as bits.
static HOT uint64_t positions(int first, int last) {
    if (first > last) return 0;
    const uint64_t upto = last >= 63 ? ~(uint64_t)0 : (((uint64_t)1 << (last + 1)) - 1);
    return upto & ~(((uint64_t)1 << first) - 1);
}

/// Correction bits for the nonzero coefficients at `nonzero`'s zigzag positions, in order
/// (G.1.2.3): a 1 moves a coefficient a step of 2^Al further from zero, unless that bit of it
/// is set already. Up to 32 bits are taken at once, and a coefficient changes without a branch
/// on its bit, which is as likely 0 as 1.
static HOT void correct_all(j_decompress_ptr cinfo, iec_bit_reader *reader, JCOEF *block, uint64_t nonzero, int step) {
    while (nonzero != 0) {
        const int count = __builtin_popcountll(nonzero) < 32 ? __builtin_popcountll(nonzero) : 32;
        ensure(cinfo, reader);
        const uint32_t bits = (uint32_t)(reader->bits >> (64 - count));
        consume(reader, count);
        for (int index = count - 1; index >= 0; index--) {
            JCOEF *coefficient = block + natural_order[__builtin_ctzll(nonzero)];
            nonzero &= nonzero - 1;
            const int value = *coefficient;
            const int moves = (int)((bits >> index) & 1) & ((value & step) == 0);
            *coefficient = (JCOEF)(value + (moves ? (value >= 0 ? step : -step) : 0));
        }
    }
}

/// For each byte b of a block's nonzero mask in natural order and each value of it, those
/// coefficients' zigzag positions as bits: eight lookups turn the one mask into the other.
static uint64_t zigzag_bits[8][256];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void make_tables(void) {
    for (int zigzag = 0; zigzag < 64; zigzag++) {
        const int natural = natural_order[zigzag];
        for (int value = 0; value < 256; value++) {
            if (value & (1 << (natural % 8))) zigzag_bits[natural / 8][value] |= (uint64_t)1 << zigzag;
        }
    }
}

/// Bit z set where the coefficient at zigzag position z is not zero.
static HOT uint64_t nonzero_zigzag(const JCOEF *block) {
    uint64_t natural = 0;
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    for (int part = 0; part < 4; part++) {
        const __m128i low = _mm_cmpeq_epi16(_mm_loadu_si128((const __m128i *)(block + 16 * part)), zero);
        const __m128i high = _mm_cmpeq_epi16(_mm_loadu_si128((const __m128i *)(block + 16 * part + 8)), zero);
        natural |= (uint64_t)(~(unsigned int)_mm_movemask_epi8(_mm_packs_epi16(low, high)) & 0xFFFF) << (16 * part);
    }
#else
    for (int index = 0; index < 64; index++) natural |= (uint64_t)(block[index] != 0) << index;
#endif
    uint64_t zigzag = 0;
    for (int part = 0; part < 8; part++) zigzag |= zigzag_bits[part][(natural >> (8 * part)) & 0xFF];
    return zigzag;
}

#if defined(__x86_64__)
#include <immintrin.h>

__attribute__((target("bmi2"))) static uint64_t nth_bit(uint64_t candidates, int n) { return _pdep_u64((uint64_t)1 << n, candidates); }
#else
static uint64_t nth_bit(uint64_t candidates, int n) {
    (void)candidates, (void)n;
    return 0;
}
#endif

/// The position of the zero coefficient that has `zeros` zeros before it among `candidates`
/// (zigzag positions as bits), or end + 1 when there are not that many, as the walk one
/// position at a time ends there. Run lengths vary from symbol to symbol, so a loop over them
/// mispredicted its end almost every time: with `deposit`, pdep puts a single bit on the
/// wanted position in one step.
static HOT int zero_after(uint64_t candidates, int zeros, int end, const int deposit) {
    if (deposit) {
        const uint64_t chosen = nth_bit(candidates, zeros);
        return chosen != 0 ? __builtin_ctzll(chosen) : end + 1;
    }
    for (int skip = 0; skip < zeros && candidates != 0; skip++) candidates &= candidates - 1;
    return candidates != 0 ? __builtin_ctzll(candidates) : end + 1;
}

/// AC, refinement of band Ss...Se (G.1.2.3): new coefficients of ±2^Al, each after a run of
/// still-zero ones, and a correction bit for every already-nonzero coefficient passed on the way
/// and, after an end of band, for those left in the band. Where the coefficients are nonzero is
/// one 64-bit mask in zigzag order, so a run is found among the zero bits and the corrections
/// go to the set ones, instead of a test at each of the band's positions. `deposit`: whether
/// the run is found with BMI2's pdep (a constant in each of the two versions below).
static HOT boolean refine_ac(j_decompress_ptr cinfo, JBLOCKROW *blocks, const int deposit) {
    iec_jpeg_progressive *state = state_of(cinfo);
    begin_mcu(cinfo, state);
    if (!cinfo->entropy->insufficient_data) {
        iec_bit_reader *reader = &state->reader;
        const iec_huffman_table *table = &state->tables[0];
        JCOEF *block = blocks[0][0];
        const int end = cinfo->Se, step = 1 << cinfo->Al;
        uint64_t nonzero = nonzero_zigzag(block);
        const uint64_t band = positions(cinfo->Ss, end);
        int k = cinfo->Ss;
        if (state->eob_run == 0) {
            for (; k <= end; k++) {
                ensure(cinfo, reader);
                const int symbol = decode(cinfo, reader, table);
                const int zeros = symbol >> 4;
                int value = 0;
                if ((symbol & 15) != 0) {
                    // The only size a refinement codes is 1; libjpeg warns and reads on.
                    if ((symbol & 15) != 1) {
                        check_data(cinfo, reader);
                        WARNMS(cinfo, JWRN_HUFF_BAD_CODE);
                    }
                    ensure(cinfo, reader);
                    value = (int)(reader->bits >> 63) ? step : -step;
                    consume(reader, 1);
                } else if (zeros != 15) {
                    unsigned int blocks_left = 1u << zeros;
                    if (zeros != 0) blocks_left += take(reader, zeros);
                    state->eob_run = blocks_left;
                    break;
                }
                // The new coefficient goes to the zero after `zeros` zeros (a ZRL ends on the
                // 16th); the nonzero ones before it get their correction bits first. With too
                // few zeros left the position is end + 1, as the one-by-one walk ends there.
                const uint64_t from_k = ~(uint64_t)0 << k;
                const int target = zero_after(~nonzero & band & from_k, zeros, end, deposit);
                const uint64_t before_target = target >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << target) - 1);
                correct_all(cinfo, reader, block, nonzero & from_k & before_target, step);
                k = target;
                if (value != 0) {
                    block[natural_order[k]] = (JCOEF)value;
                    if (k <= end) nonzero |= (uint64_t)1 << k;
                }
            }
        }
        if (state->eob_run > 0) {
            // In an end-of-band run: only correction bits, for the rest of the band.
            correct_all(cinfo, reader, block, nonzero & positions(k, end), step);
            state->eob_run--;
        }
    }
    return end_mcu(cinfo, state);
}

static boolean decode_ac_refine(j_decompress_ptr cinfo, JBLOCKROW *blocks) { return refine_ac(cinfo, blocks, 0); }

#if defined(__x86_64__)
__attribute__((target("bmi2"))) static boolean decode_ac_refine_bmi2(j_decompress_ptr cinfo, JBLOCKROW *blocks) {
    return refine_ac(cinfo, blocks, 1);
}
#else
static boolean decode_ac_refine_bmi2(j_decompress_ptr cinfo, JBLOCKROW *blocks) { return refine_ac(cinfo, blocks, 0); }
#endif

/// The zigzag masks' table, once per process.
static void prepare_tables(void) { pthread_once(&tables_once, make_tables); }

// MARK: Setup

/// Readies the state for the scan libjpeg has just started and points decode_mcu at the
/// decoder for its kind.
static void start_scan(j_decompress_ptr cinfo, iec_jpeg_progressive *state) {
    start_interval(cinfo, state);
    cinfo->entropy->insufficient_data = FALSE;
    if (cinfo->comps_in_scan < 1 || cinfo->comps_in_scan > MAX_COMPS_IN_SCAN) ERREXIT2(cinfo, JERR_COMPONENT_COUNT, cinfo->comps_in_scan, MAX_COMPS_IN_SCAN);
    if (cinfo->Ss == 0) {
        if (cinfo->Ah == 0) {
            for (int index = 0; index < cinfo->comps_in_scan; index++) {
                build_table(cinfo, cinfo->dc_huff_tbl_ptrs, cinfo->cur_comp_info[index]->dc_tbl_no, &state->tables[index]);
            }
            cinfo->entropy->decode_mcu = decode_dc_first;
        } else {
            cinfo->entropy->decode_mcu = decode_dc_refine;
        }
    } else {
        // libjpeg allows one component in an AC scan and a band within 1...63; it has checked.
        if (cinfo->comps_in_scan != 1 || cinfo->Se > 63 || cinfo->Ss > cinfo->Se) {
            ERREXIT4(cinfo, JERR_BAD_PROGRESSION, cinfo->Ss, cinfo->Se, cinfo->Ah, cinfo->Al);
        }
        build_table(cinfo, cinfo->ac_huff_tbl_ptrs, cinfo->cur_comp_info[0]->ac_tbl_no, &state->tables[0]);
        cinfo->entropy->decode_mcu =
            cinfo->Ah == 0 ? decode_ac_first : state->fast_bit_deposit ? decode_ac_refine_bmi2 : decode_ac_refine;
    }
}

/// libjpeg's start of a scan, then the engine's.
static void start_pass(j_decompress_ptr cinfo) {
    iec_jpeg_progressive *state = state_of(cinfo);
    state->library_start_pass(cinfo);
    start_scan(cinfo, state);
}

void iec_jpeg_progressive_install(j_decompress_ptr cinfo, iec_jpeg_progressive *state) {
    cinfo->client_data = state;
    state->library_start_pass = cinfo->entropy->start_pass;
    cinfo->entropy->start_pass = start_pass;
    state->installed = 1;
    state->fast_bit_deposit = iec_kernels_fast_bit_deposit();
    prepare_tables();
    start_scan(cinfo, state);
}
