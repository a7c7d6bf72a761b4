// What the engine's two entropy decoders share (see jpeg_entropy.h), written from ITU-T T.81:
// annex C and F.2.2.3 (Huffman tables and codes), F.2.2.5 (the 0xFF00 stuffing and markers in
// the data), F.2.1.3 (restart intervals). libjpeg-turbo's own readers take the data a bit at a
// time through a general refill; here the bits come 8 bytes at a time into a 64-bit register,
// as in the bit readers of Fabian Giesen's "Reading bits in far too many ways".
//
// Everything around the decoders stays libjpeg's: it parses the markers, checks each scan's
// parameters and tables (its own start_pass still runs first, and fails a bad scan as before),
// keeps the coefficient buffers and calls decode_mcu for every MCU. Damaged data is met the way
// libjpeg's careful path meets it: the same warnings (data that ends at a marker, a code no
// table has), zeros in place of the missing bits, an MCU skipped once its data is known to be
// gone, the same writes.
#include "jpeg_entropy.h"

#include "CImageKernels.h"

#include <string.h>

const unsigned char iec_jpeg_natural_order[80] = {
    0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,  12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6,  7,  14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37,
    44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63,
};

// MARK: Huffman tables

/// The joint lookup's entries for `symbol`, whose code is `code` of `length` bits: with the
/// coefficient's value where its extra bits fit in the lookup too, else the symbol alone.
static void fill_joint(iec_huffman_table *table, int32_t code, int length, int symbol) {
    const int size = symbol & 15, spare = IEC_HUFFMAN_JOINT_BITS - length;
    for (int fill = 0; fill < (1 << spare); fill++) {
        int32_t entry = symbol << 8 | length;
        if (size != 0 && size <= spare) {
            const unsigned int extra = (unsigned int)fill >> (spare - size);
            entry = (int32_t)((uint32_t)iec_huffman_extend(extra, size) << 16) | symbol << 8 | IEC_JOINT_VALUE | (length + size);
        }
        table->joint[(code << spare) | fill] = entry;
    }
}

void iec_huffman_build(j_decompress_ptr cinfo, JHUFF_TBL *const *sources, int number, int joint, iec_huffman_table *table) {
    if (number < 0 || number >= NUM_HUFF_TBLS || sources[number] == NULL) ERREXIT1(cinfo, JERR_NO_HUFF_TABLE, number);
    const JHUFF_TBL *source = sources[number];
    memset(table->lookup, 0, sizeof table->lookup);
    if (joint) memset(table->joint, 0, sizeof table->joint);
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
            const int symbol = source->huffval[index];
            table->symbols[index] = (uint8_t)symbol;
            if (length <= IEC_HUFFMAN_LOOKUP_BITS) {
                const int shift = IEC_HUFFMAN_LOOKUP_BITS - length;
                for (int fill = 0; fill < (1 << shift); fill++) table->lookup[(code << shift) | fill] = (uint16_t)(length << 8 | symbol);
            }
            if (joint && length <= IEC_HUFFMAN_JOINT_BITS) fill_joint(table, code, length, symbol);
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

iec_bit_reader iec_bits_refill(j_decompress_ptr cinfo, iec_bit_reader reader) {
    while (reader.count <= 56) {
        const int byte = next_data_byte(cinfo);
        if (byte >= 0) {
            reader.bits |= (uint64_t)byte << (56 - reader.count);
        } else {
            reader.padding += 8;
        }
        reader.count += 8;
    }
    return reader;
}

// MARK: Restarts

void iec_entropy_start_interval(j_decompress_ptr cinfo, iec_jpeg_entropy *state) {
    memset(&state->reader, 0, sizeof state->reader);
    memset(state->last_dc, 0, sizeof state->last_dc);
    state->eob_run = 0;
    state->restarts_to_go = cinfo->restart_interval;
}

/// Whole bytes left unread are counted as libjpeg counts them, for its warning.
void iec_entropy_restart(j_decompress_ptr cinfo, iec_jpeg_entropy *state) {
    cinfo->marker->discarded_bytes += (unsigned int)((state->reader.count - state->reader.padding) / 8);
    if (!(*cinfo->marker->read_restart_marker)(cinfo)) ERREXIT(cinfo, JERR_CANT_SUSPEND);
    iec_entropy_start_interval(cinfo, state);
    // A good RSTn means the data goes on, whatever was missing before it.
    if (cinfo->unread_marker == 0) cinfo->entropy->insufficient_data = FALSE;
}

// MARK: Setup

/// Readies the state for the scan libjpeg has just started, and the scan's decoder.
static void start_scan(j_decompress_ptr cinfo, iec_jpeg_entropy *state) {
    iec_entropy_start_interval(cinfo, state);
    cinfo->entropy->insufficient_data = FALSE;
    if (cinfo->comps_in_scan < 1 || cinfo->comps_in_scan > MAX_COMPS_IN_SCAN) ERREXIT2(cinfo, JERR_COMPONENT_COUNT, cinfo->comps_in_scan, MAX_COMPS_IN_SCAN);
    state->start_scan(cinfo);
}

/// libjpeg's start of a scan, then the engine's.
static void start_pass(j_decompress_ptr cinfo) {
    iec_jpeg_entropy *state = iec_entropy_state(cinfo);
    state->library_start_pass(cinfo);
    start_scan(cinfo, state);
}

void iec_jpeg_entropy_install(j_decompress_ptr cinfo, iec_jpeg_entropy *state) {
    cinfo->client_data = state;
    state->library_start_pass = cinfo->entropy->start_pass;
    state->start_scan = cinfo->progressive_mode ? iec_jpeg_progressive_start_scan : iec_jpeg_sequential_start_scan;
    cinfo->entropy->start_pass = start_pass;
    state->installed = 1;
    state->fast_bit_deposit = iec_kernels_fast_bit_deposit();
    start_scan(cinfo, state);
}
