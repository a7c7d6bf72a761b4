// Entropy decoding of progressive Huffman JPEG scans, written from ITU-T T.81 G.1.2 (DC and AC
// scans, first and refinement), in place of libjpeg-turbo's jdphuff.c, which was 45% of a batch
// of progressive photos' CPU. The tables, the bit reader and restarts are jpeg_entropy.c's.
// What a scan writes into the coefficient buffer is what T.81 defines, so the coefficients, and
// every pixel after them, are libjpeg's.
#include "jpeg_entropy.h"

#include "CImageKernels.h"

#include <pthread.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// MARK: Scans

/// DC, first scan: each block's DC difference (T.81 F.2.2.1), added to its component's
/// prediction, scaled by 2^Al.
static boolean decode_dc_first(j_decompress_ptr cinfo, JBLOCKROW *blocks) {
    iec_jpeg_entropy *state = iec_entropy_state(cinfo);
    iec_entropy_begin_mcu(cinfo, state);
    if (!cinfo->entropy->insufficient_data) {
        iec_bit_reader *reader = &state->reader;
        for (int block = 0; block < cinfo->blocks_in_MCU; block++) {
            const int component = cinfo->MCU_membership[block];
            const int difference = iec_huffman_dc_difference(cinfo, reader, &state->tables[component]);
            state->last_dc[component] = iec_entropy_add_dc(cinfo, state->last_dc[component], difference);
            blocks[block][0][0] = (JCOEF)((unsigned int)state->last_dc[component] << cinfo->Al);
        }
    }
    return iec_entropy_end_mcu(cinfo, state);
}

/// DC, refinement: one more bit of each block's DC (G.1.2.1). Zeros past the data change
/// nothing, so MCUs are not skipped here (libjpeg reads on as well).
static boolean decode_dc_refine(j_decompress_ptr cinfo, JBLOCKROW *blocks) {
    iec_jpeg_entropy *state = iec_entropy_state(cinfo);
    iec_entropy_begin_mcu(cinfo, state);
    iec_bit_reader *reader = &state->reader;
    const int bit = 1 << cinfo->Al;
    for (int block = 0; block < cinfo->blocks_in_MCU; block++) {
        iec_bits_ensure(cinfo, reader);
        blocks[block][0][0] = (JCOEF)(blocks[block][0][0] | (iec_bits_take(reader, 1) ? bit : 0));
    }
    return iec_entropy_end_mcu(cinfo, state);
}

/// AC, first scan of band Ss...Se of one component (G.1.2.2): run/size symbols, zero runs of
/// 16, and end-of-band runs that cover whole blocks.
static boolean decode_ac_first(j_decompress_ptr cinfo, JBLOCKROW *blocks) {
    iec_jpeg_entropy *state = iec_entropy_state(cinfo);
    iec_entropy_begin_mcu(cinfo, state);
    if (!cinfo->entropy->insufficient_data) {
        if (state->eob_run > 0) {
            state->eob_run--;
        } else {
            iec_bit_reader *reader = &state->reader;
            const iec_huffman_table *table = &state->tables[0];
            JCOEF *block = blocks[0][0];
            const int end = cinfo->Se, shift = cinfo->Al;
            for (int k = cinfo->Ss; k <= end; k++) {
                iec_bits_ensure(cinfo, reader);
                const int symbol = iec_huffman_decode(cinfo, reader, table);
                const int run = symbol >> 4, size = symbol & 15;
                if (size != 0) {
                    k += run;
                    const int value = iec_huffman_extend(iec_bits_take(reader, size), size);
                    block[iec_jpeg_natural_order[k]] = (JCOEF)((unsigned int)value << shift);
                } else if (run == 15) {
                    k += 15;
                } else {
                    // EOBn: this block and 2^n - 1 + (n extra bits) more end here.
                    unsigned int blocks_left = 1u << run;
                    if (run != 0) blocks_left += iec_bits_take(reader, run);
                    state->eob_run = blocks_left - 1;
                    break;
                }
            }
        }
    }
    return iec_entropy_end_mcu(cinfo, state);
}

/// Zigzag positions first ... last (first ≤ 64), as bits.
static IEC_HOT uint64_t positions(int first, int last) {
    if (first > last) return 0;
    const uint64_t upto = last >= 63 ? ~(uint64_t)0 : (((uint64_t)1 << (last + 1)) - 1);
    return upto & ~(((uint64_t)1 << first) - 1);
}

/// Correction bits for the nonzero coefficients at `nonzero`'s zigzag positions, in order
/// (G.1.2.3): a 1 moves a coefficient a step of 2^Al further from zero, unless that bit of it
/// is set already. Up to 32 bits are taken at once, and a coefficient changes without a branch
/// on its bit, which is as likely 0 as 1.
static IEC_HOT void correct_all(j_decompress_ptr cinfo, iec_bit_reader *reader, JCOEF *block, uint64_t nonzero, int step) {
    while (nonzero != 0) {
        const int count = __builtin_popcountll(nonzero) < 32 ? __builtin_popcountll(nonzero) : 32;
        iec_bits_ensure(cinfo, reader);
        const uint32_t bits = (uint32_t)(reader->bits >> (64 - count));
        iec_bits_consume(reader, count);
        for (int index = count - 1; index >= 0; index--) {
            JCOEF *coefficient = block + iec_jpeg_natural_order[__builtin_ctzll(nonzero)];
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
        const int natural = iec_jpeg_natural_order[zigzag];
        for (int value = 0; value < 256; value++) {
            if (value & (1 << (natural % 8))) zigzag_bits[natural / 8][value] |= (uint64_t)1 << zigzag;
        }
    }
}

/// Bit z set where the coefficient at zigzag position z is not zero.
static IEC_HOT uint64_t nonzero_zigzag(const JCOEF *block) {
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
static IEC_HOT int zero_after(uint64_t candidates, int zeros, int end, const int deposit) {
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
static IEC_HOT boolean refine_ac(j_decompress_ptr cinfo, JBLOCKROW *blocks, const int deposit) {
    iec_jpeg_entropy *state = iec_entropy_state(cinfo);
    iec_entropy_begin_mcu(cinfo, state);
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
                iec_bits_ensure(cinfo, reader);
                const int symbol = iec_huffman_decode(cinfo, reader, table);
                const int zeros = symbol >> 4;
                int value = 0;
                if ((symbol & 15) != 0) {
                    // The only size a refinement codes is 1; libjpeg warns and reads on.
                    if ((symbol & 15) != 1) {
                        iec_entropy_check_data(cinfo, reader);
                        WARNMS(cinfo, JWRN_HUFF_BAD_CODE);
                    }
                    iec_bits_ensure(cinfo, reader);
                    value = (int)(reader->bits >> 63) ? step : -step;
                    iec_bits_consume(reader, 1);
                } else if (zeros != 15) {
                    unsigned int blocks_left = 1u << zeros;
                    if (zeros != 0) blocks_left += iec_bits_take(reader, zeros);
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
                    block[iec_jpeg_natural_order[k]] = (JCOEF)value;
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
    return iec_entropy_end_mcu(cinfo, state);
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

void iec_jpeg_progressive_start_scan(j_decompress_ptr cinfo) {
    iec_jpeg_entropy *state = iec_entropy_state(cinfo);
    prepare_tables();
    if (cinfo->Ss == 0) {
        if (cinfo->Ah == 0) {
            for (int index = 0; index < cinfo->comps_in_scan; index++) {
                iec_huffman_build(cinfo, cinfo->dc_huff_tbl_ptrs, cinfo->cur_comp_info[index]->dc_tbl_no, 0, &state->tables[index]);
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
        iec_huffman_build(cinfo, cinfo->ac_huff_tbl_ptrs, cinfo->cur_comp_info[0]->ac_tbl_no, 0, &state->tables[0]);
        cinfo->entropy->decode_mcu =
            cinfo->Ah == 0 ? decode_ac_first : state->fast_bit_deposit ? decode_ac_refine_bmi2 : decode_ac_refine;
    }
}
