/// The size a HEVC or AV1 stream is coded at, read from its parameter sets: the codec allocates
/// for that size, whatever the container's `ispe` says, so a plan made from `ispe` holds only if
/// the two agree. An 840-byte AVIF declaring 64×64 and coded at 4096² took a decode from 50 to
/// 290 MB before this check.
enum CodedImageSize {
    /// What an HEVC sequence parameter set says of the pictures it codes.
    struct HEVCSequence: Sendable, Hashable {
        var width: Int
        var height: Int
        /// The samples' layout: what libde265 hands libheif, and what a planar decode gets.
        var format: HEVCSampleFormat
    }

    /// HEVC's sequence parameter set (H.265 7.3.2.2): `pic_width_in_luma_samples` and
    /// `pic_height_in_luma_samples`, after the profile, tier and level, then the chroma format
    /// and the bit depths. `nal` is the whole NAL unit, header included, emulation prevention
    /// bytes still in.
    static func hevc(sps nal: ArraySlice<UInt8>) -> HEVCSequence? {
        var bits = BitReader(rbsp(nal.dropFirst(2)))
        guard bits.skip(4), let subLayers = bits.read(3), bits.skip(1) else { return nil }
        // profile_tier_level(1, sps_max_sub_layers_minus1): 88 bits of general profile, 8 of level.
        guard bits.skip(96) else { return nil }
        var profilePresent: [Bool] = []
        var levelPresent: [Bool] = []
        for _ in 0..<subLayers {
            guard let profile = bits.read(1), let level = bits.read(1) else { return nil }
            profilePresent.append(profile == 1)
            levelPresent.append(level == 1)
        }
        if subLayers > 0, !bits.skip(2 * (8 - subLayers)) { return nil }
        for layer in 0..<subLayers {
            if profilePresent[layer], !bits.skip(88) { return nil }
            if levelPresent[layer], !bits.skip(8) { return nil }
        }
        // chroma_format_idc: 0...3, anything else is not a stream libde265 decodes.
        guard bits.exponentialGolomb() != nil, let idc = bits.exponentialGolomb(), var chroma = HEVCSampleFormat.Chroma(rawValue: idc),
            idc <= 3
        else { return nil }
        if chroma == .full444 {
            guard let flag = bits.read(1) else { return nil }
            if flag == 1 { chroma = .separatePlanes }
        }
        guard let width = bits.exponentialGolomb(), let height = bits.exponentialGolomb(), let window = bits.read(1) else { return nil }
        // conformance_window_flag: four offsets.
        if window == 1 {
            for _ in 0..<4 where bits.exponentialGolomb() == nil { return nil }
        }
        // Range-checked here: H.265 allows 8 to 16 bits.
        guard let luma = bits.exponentialGolomb(), let chromaBits = bits.exponentialGolomb(), luma <= 8, chromaBits <= 8 else { return nil }
        let format = HEVCSampleFormat(chroma: chroma, lumaBits: luma + 8, chromaBits: chromaBits + 8)
        return HEVCSequence(width: width, height: height, format: format)
    }

    /// AV1's sequence header OBU payload (AV1 5.5): `max_frame_width_minus_1 + 1` and
    /// `max_frame_height_minus_1 + 1`, the largest frame the stream may code.
    static func av1(sequenceHeader payload: ArraySlice<UInt8>) -> (width: Int, height: Int)? {
        var bits = BitReader(Array(payload))
        guard bits.skip(4), let reduced = bits.read(1) else { return nil }
        if reduced == 1 {
            guard bits.skip(5) else { return nil }
        } else {
            guard let timing = bits.read(1) else { return nil }
            var decoderModel = 0
            var delayLength = 0
            if timing == 1 {
                guard bits.skip(64), let equal = bits.read(1) else { return nil }
                if equal == 1, bits.uvlc() == nil { return nil }
                guard let model = bits.read(1) else { return nil }
                decoderModel = model
                if model == 1 {
                    guard let length = bits.read(5), bits.skip(32 + 5 + 5) else { return nil }
                    delayLength = length + 1
                }
            }
            guard let displayDelay = bits.read(1), let points = bits.read(5) else { return nil }
            for _ in 0...points {
                guard bits.skip(12), let level = bits.read(5) else { return nil }
                if level > 7, !bits.skip(1) { return nil }
                if decoderModel == 1 {
                    guard let present = bits.read(1) else { return nil }
                    if present == 1, !bits.skip(2 * delayLength + 1) { return nil }
                }
                if displayDelay == 1 {
                    guard let present = bits.read(1) else { return nil }
                    if present == 1, !bits.skip(4) { return nil }
                }
            }
        }
        guard let widthBits = bits.read(4), let heightBits = bits.read(4),
            let width = bits.read(widthBits + 1), let height = bits.read(heightBits + 1)
        else { return nil }
        return (width + 1, height + 1)
    }

    /// A NAL unit's payload without its emulation prevention bytes (00 00 03 → 00 00).
    static func rbsp(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count) // small: a parameter set, a few dozen bytes of the header
        var zeros = 0
        for byte in bytes {
            if zeros >= 2, byte == 3 {
                zeros = 0
                continue
            }
            zeros = byte == 0 ? zeros + 1 : 0
            result.append(byte)
        }
        return result
    }
}

/// Most-significant-bit-first reads; every read returns nil past the end.
struct BitReader {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func read(_ count: Int) -> Int? {
        guard count >= 0, count <= 32, position + count <= bytes.count * 8 else { return nil }
        var value = 0
        for _ in 0..<count {
            value = value << 1 | Int(bytes[position >> 3] >> (7 - UInt8(position & 7)) & 1)
            position += 1
        }
        return value
    }

    mutating func skip(_ count: Int) -> Bool {
        guard count >= 0, position + count <= bytes.count * 8 else { return false }
        position += count
        return true
    }

    /// ue(v): at most 31 leading zeros (a 32-bit value), as the standards allow.
    mutating func exponentialGolomb() -> Int? {
        var zeros = 0
        while true {
            guard let bit = read(1) else { return nil }
            if bit == 1 { break }
            zeros += 1
            guard zeros <= 31 else { return nil }
        }
        guard let rest = read(zeros) else { return nil }
        return (1 << zeros) - 1 + rest
    }

    /// AV1's uvlc(): the same shape, 32 zeros meaning the largest value.
    mutating func uvlc() -> Int? { exponentialGolomb() }
}

/// How an HEVC stream's samples are laid out (H.265's `chroma_format_idc` and bit depths).
struct HEVCSampleFormat: Sendable, Hashable {
    enum Chroma: Int, Sendable, Hashable {
        case monochrome = 0
        case subsampled420 = 1
        case subsampled422 = 2
        case full444 = 3
        /// 4:4:4 coded as three monochrome planes (`separate_colour_plane_flag`).
        case separatePlanes = 4
    }
    var chroma: Chroma
    var lumaBits: Int
    var chromaBits: Int
}

extension HEIFContainer.Tables {
    /// Every parameter set of `id`'s stream — in its configuration property and in its own
    /// data — codes at most the declared size plus the codec's block padding. Returns the sample
    /// format every one of them declares (nil for AV1, or when they differ).
    func checkCodedSize(of id: UInt32, width: Int, height: Int) throws(ImageCodecError) -> HEVCSampleFormat? {
        guard let item = items[id] else { return nil }
        var sizes: [(width: Int, height: Int)] = []
        var formats: Set<HEVCSampleFormat> = []
        let config = item.properties.map { properties[$0 - 1] }
        if item.type == FourCC("hvc1") {
            guard let hvcC = config.first(where: { $0.type == FourCC("hvcC") }), hvcC.payload.count >= 23 else {
                throw .corruptData("HEIF: the HEVC image \(id) has no 'hvcC' configuration")
            }
            let lengthSize = Int(bytes[hvcC.payload.lowerBound + 21] & 3) + 1
            // hvcC's arrays: type, count, then length-prefixed NAL units.
            var cursor = HEIFContainer.Cursor(bytes, hvcC.payload.lowerBound + 22..<hvcC.payload.upperBound)
            for _ in 0..<(try cursor.u8()) {
                try cursor.skip(1)
                for _ in 0..<(try cursor.u16()) {
                    let length = try cursor.u16()
                    let start = cursor.offset
                    try cursor.skip(length)
                    try hevcSequence(Array(bytes[start..<start + length]), sizes: &sizes, formats: &formats)
                }
            }
            try scanStream(id) { (offset) throws(ImageCodecError) in
                let head = itemBytes(id, from: offset, count: lengthSize + 1)
                guard head.count == lengthSize + 1 else { throw .corruptData("HEIF: the HEVC data of item \(id) is cut short") }
                let length = head.prefix(lengthSize).reduce(0) { $0 << 8 | Int($1) }
                // Only a sequence parameter set is read further: a few dozen bytes, 512 at most.
                if head[lengthSize] >> 1 & 63 == 33 {
                    try hevcSequence(itemBytes(id, from: offset + lengthSize, count: min(length, 512)), sizes: &sizes, formats: &formats)
                }
                return lengthSize + length
            }
        } else if item.type == FourCC("av01") {
            if let av1C = config.first(where: { $0.type == FourCC("av1C") }), av1C.payload.count > 4 {
                sizes += try av1Sizes(Array(bytes[av1C.payload.dropFirst(4)]))
            }
            try scanStream(id) { (offset) throws(ImageCodecError) in
                let head = itemBytes(id, from: offset, count: 10)
                let (size, used) = try obuSize(head, remaining: itemLength(id) - offset)
                if head.count > 0, head[0] >> 3 & 15 == 1 {
                    sizes += try av1Sizes(itemBytes(id, from: offset, count: min(used + size, 1024)))
                }
                return used + size
            }
        }
        for coded in sizes where coded.width > width + Limits.codedPadding || coded.height > height + Limits.codedPadding {
            throw .limitExceeded("HEIF: item \(id) is coded at \(coded.width)×\(coded.height), its 'ispe' declares \(width)×\(height)")
        }
        return formats.count == 1 ? formats.first : nil
    }

    private func itemLength(_ id: UInt32) -> Int { items[id]?.extents.reduce(0) { $0 + $1.count } ?? 0 }

    /// Walks an item's stream unit by unit: `unit` returns the length of the unit at an offset.
    private func scanStream(_ id: UInt32, _ unit: (Int) throws(ImageCodecError) -> Int) throws(ImageCodecError) {
        let total = itemLength(id)
        var offset = 0
        while offset < total {
            let length = try unit(offset)
            guard length > 0, length <= total - offset else { throw .corruptData("HEIF: a unit of item \(id)'s stream runs past its data") }
            offset += length
        }
    }

    private func hevcSequence(
        _ nal: [UInt8], sizes: inout [(width: Int, height: Int)], formats: inout Set<HEVCSampleFormat>
    ) throws(ImageCodecError) {
        // NAL type 33: a sequence parameter set.
        guard nal.count >= 2, nal[0] >> 1 & 63 == 33 else { return }
        guard let sequence = CodedImageSize.hevc(sps: nal[...]) else { throw .corruptData("HEIF: an unreadable HEVC sequence parameter set") }
        sizes.append((sequence.width, sequence.height))
        formats.insert(sequence.format)
    }

    /// The sizes of the sequence headers among `obus` (a whole run of OBUs, or one).
    private func av1Sizes(_ obus: [UInt8]) throws(ImageCodecError) -> [(width: Int, height: Int)] {
        var result: [(width: Int, height: Int)] = []
        var offset = 0
        while offset < obus.count {
            let (size, used) = try obuSize(Array(obus[offset..<min(obus.count, offset + 10)]), remaining: obus.count - offset)
            if obus[offset] >> 3 & 15 == 1 {
                let payload = obus[(offset + used)..<min(obus.count, offset + used + size)]
                guard let coded = CodedImageSize.av1(sequenceHeader: payload) else {
                    throw .corruptData("HEIF: an unreadable AV1 sequence header")
                }
                result.append(coded)
            }
            offset += used + size
        }
        return result
    }

    /// An OBU's payload size and header length (AV1 5.3): a size field in LEB128, or, without
    /// one, the rest of the data.
    private func obuSize(_ head: [UInt8], remaining: Int) throws(ImageCodecError) -> (size: Int, used: Int) {
        guard let first = head.first else { throw .corruptData("HEIF: an empty AV1 unit") }
        var used = 1 + Int(first >> 2 & 1)
        // An extension byte the data does not hold (a heif-header finding: the size came out
        // negative, and the payload's range reversed).
        guard used <= remaining else { throw .corruptData("HEIF: an AV1 unit's header is cut short") }
        guard first & 2 != 0 else { return (remaining - used, used) }
        var size = 0
        for index in 0..<8 {
            guard used < head.count else { throw .corruptData("HEIF: an AV1 unit's size is cut short") }
            let byte = head[used]
            used += 1
            size |= Int(byte & 0x7f) << (7 * index)
            if byte & 0x80 == 0 { break }
        }
        guard size >= 0, size <= remaining - used else { throw .corruptData("HEIF: an AV1 unit runs past its data") }
        return (size, used)
    }
}
