// The engine's entropy decoder for progressive Huffman JPEG scans (jpeg_progressive.c), which
// jpeg_shim.c puts in place of libjpeg's when a progressive decode starts reading scans.
#ifndef IEC_JPEG_PROGRESSIVE_H
#define IEC_JPEG_PROGRESSIVE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jpeglib.h>

/// Codes of up to this many bits are found with one table lookup.
#define IEC_HUFFMAN_LOOKUP_BITS 9

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
} iec_huffman_table;

/// Bits of the current scan's entropy-coded data, most significant first.
typedef struct {
    uint64_t bits;
    /// Bits held in `bits`.
    int count;
    /// Of those, bits from the data; the rest are the zeros that follow a marker.
    int real;
} iec_bit_reader;

typedef struct {
    /// 0: libjpeg's own decoder stays (for comparisons); set before decoding starts.
    int enabled;
    int installed;
    /// Refinement scans find runs with pdep (iec_kernels_fast_bit_deposit); the same
    /// coefficients either way.
    int fast_bit_deposit;
    void (*library_start_pass)(j_decompress_ptr cinfo);
    iec_bit_reader reader;
    unsigned int eob_run;
    unsigned int restarts_to_go;
    int last_dc[MAX_COMPS_IN_SCAN];
    /// DC scans: one table per component of the scan; AC scans: [0].
    iec_huffman_table tables[MAX_COMPS_IN_SCAN];
} iec_jpeg_progressive;

/// Puts the engine's decoder in place of libjpeg's for every scan from the current one on.
/// Call once the decoder's master setup is done and before any scan data is read (libjpeg has
/// already started the first scan, which this starts again): `cinfo` must be progressive,
/// Huffman-coded, reading from a source that never suspends.
void iec_jpeg_progressive_install(j_decompress_ptr cinfo, iec_jpeg_progressive *state);

#endif
