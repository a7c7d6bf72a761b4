// Entropy decoding of sequential Huffman JPEG scans (baseline and extended), written from ITU-T
// T.81 F.2.2 (a DC difference, then run/size symbols for the ACs of each block, in zigzag
// order), in place of libjpeg-turbo's jdhuff.c. The tables, the bit reader and restarts are
// jpeg_entropy.c's.
//
// Most AC codes are short and most of their extra bits are few, so the AC table has a second,
// joint lookup: the next 10 bits give a code, its extra bits and the coefficient's value at
// once when they fit, which is most coefficients of a photo (the idea of stb_image's "fast AC"
// table, credited in the codec's "Decoding choices").
//
// Damage is met as libjpeg's careful path (decode_mcu_slow) meets it. Its fast path, which it
// takes while more than 512 bytes a block of data are left, turns a code no table has into
// symbol 0 without a warning; here every such code warns, so a strict decode fails on it (a bad
// Huffman code is damage) where libjpeg's would have gone on to pixels it made up. The symbol
// and the bits it takes are the same, so a lenient decode gives libjpeg's pixels.
#include "jpeg_entropy.h"

/// One block's coefficients in zigzag order (F.2.2.1 and F.2.2.2) into `block`, which the
/// caller has zeroed.
static IEC_HOT void decode_block(j_decompress_ptr cinfo, iec_bit_reader *reader, const iec_huffman_table *ac, JCOEF *block) {
    for (int k = 1; k < DCTSIZE2; k++) {
        iec_bits_ensure(cinfo, reader);
        const int32_t entry = ac->joint[reader->bits >> (64 - IEC_HUFFMAN_JOINT_BITS)];
        int symbol;
        if (entry & IEC_JOINT_VALUE) {
            iec_bits_consume(reader, entry & 31);
            k += (entry >> 12) & 15;
            block[iec_jpeg_natural_order[k]] = (JCOEF)(entry >> 16);
            continue;
        }
        if (entry != 0) {
            iec_bits_consume(reader, entry & 31);
            symbol = (entry >> 8) & 0xFF;
        } else {
            symbol = iec_huffman_decode_long(cinfo, reader, ac, IEC_HUFFMAN_JOINT_BITS + 1);
        }
        const int run = symbol >> 4, size = symbol & 15;
        if (size != 0) {
            k += run;
            block[iec_jpeg_natural_order[k]] = (JCOEF)iec_huffman_extend(iec_bits_take(reader, size), size);
        } else if (run == 15) {
            k += 15;
        } else {
            break;
        }
    }
}

/// One MCU: each block's DC difference, added to its component's prediction, then its ACs.
/// `blocks` is NULL when libjpeg skips rows: the MCU is read and nothing is kept but the DC
/// predictions. A component libjpeg does not need (colour for a gray output) keeps nothing, and
/// at 1/8 scale only DCs are kept, as libjpeg does; what is not kept is read into `discarded`.
static boolean decode_mcu(j_decompress_ptr cinfo, JBLOCKROW *blocks) {
    iec_jpeg_entropy *state = iec_entropy_state(cinfo);
    if (--state->mcus_to_monitor == 0) {
        state->mcus_to_monitor = IEC_MCUS_PER_MONITOR;
        if (cinfo->progress != NULL) (*cinfo->progress->progress_monitor)((j_common_ptr)cinfo);
    }
    iec_entropy_begin_mcu(cinfo, state);
    if (!cinfo->entropy->insufficient_data) {
        // The reader in locals for the MCU, so that it stays in registers.
        iec_bit_reader bits = state->reader, *reader = &bits;
        JBLOCK discarded;
        for (int index = 0; index < cinfo->blocks_in_MCU; index++) {
            const int component = state->block_component[index];
            const int difference = iec_huffman_dc_difference(cinfo, reader, &state->tables[component]);
            JCOEF *block = blocks != NULL ? blocks[index][0] : NULL;
            if (state->dc_kept[index]) {
                state->last_dc[component] = iec_entropy_add_dc(cinfo, state->last_dc[component], difference);
                if (block != NULL) block[0] = (JCOEF)state->last_dc[component];
            }
            decode_block(cinfo, reader, &state->ac_tables[component], block != NULL && state->ac_kept[index] ? block : discarded);
        }
        state->reader = bits;
    }
    return iec_entropy_end_mcu(cinfo, state);
}

void iec_jpeg_sequential_start_scan(j_decompress_ptr cinfo) {
    iec_jpeg_entropy *state = iec_entropy_state(cinfo);
    for (int index = 0; index < cinfo->comps_in_scan; index++) {
        const jpeg_component_info *component = cinfo->cur_comp_info[index];
        iec_huffman_build(cinfo, cinfo->dc_huff_tbl_ptrs, component->dc_tbl_no, 0, &state->tables[index]);
        iec_huffman_build(cinfo, cinfo->ac_huff_tbl_ptrs, component->ac_tbl_no, 1, &state->ac_tables[index]);
    }
    if (cinfo->blocks_in_MCU < 0 || cinfo->blocks_in_MCU > D_MAX_BLOCKS_IN_MCU) ERREXIT(cinfo, JERR_BAD_MCU_SIZE);
    for (int index = 0; index < cinfo->blocks_in_MCU; index++) {
        const int component = cinfo->MCU_membership[index];
        if (component < 0 || component >= cinfo->comps_in_scan) ERREXIT(cinfo, JERR_BAD_MCU_SIZE);
        const jpeg_component_info *info = cinfo->cur_comp_info[component];
        state->block_component[index] = (unsigned char)component;
        state->dc_kept[index] = info->component_needed != 0;
        state->ac_kept[index] = info->component_needed != 0 && info->DCT_scaled_size > 1;
    }
    state->mcus_to_monitor = IEC_MCUS_PER_MONITOR;
    cinfo->entropy->decode_mcu = decode_mcu;
}
