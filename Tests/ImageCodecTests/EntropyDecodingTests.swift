import CImageCodecShim
import CTestImageWriter
import Foundation
import Testing
import TestSupport
@_spi(Tuning) @testable import ImageCodec

/// The engine's entropy decoders (`jpeg_sequential.c`, `jpeg_progressive.c`) against
/// libjpeg-turbo's own, on the same files: sequential scans (interleaved and one per component,
/// T.81's example tables and optimised ones) and every progressive scan kind (DC and AC, first
/// and refinement), restart intervals, gray and 4:2:0 colour, sizes that end mid-block and
/// mid-MCU, and damaged data, where both must fail or recover in the same way.
@Suite("Entropy decoding")
struct EntropyDecodingTests {
    /// Detail everywhere (so every band has coefficients), from a seeded generator.
    static func photo(width: Int, height: Int, channels: Int, seed: UInt64) -> [UInt8] {
        var random = SeededGenerator(seed: seed)
        return (0..<(width * height * channels)).map { index in
            let pixel = index / channels
            let (x, y) = (pixel % width, pixel / width)
            let smooth = (x * 5 + y * 3 + (index % channels) * 70) % 256
            return UInt8(truncatingIfNeeded: smooth + Int.random(in: -40...40, using: &random))
        }
    }

    struct Source: CustomStringConvertible {
        let description: String
        let bytes: Data
        let width: Int, height: Int
        /// libjpeg reads every MCU on its careful path (restart intervals, or a file too small
        /// for its fast one), so its damage warnings are the engine's to the letter.
        var carefulLibjpeg = true
    }

    /// Progressive files of each kind the writers make.
    static func progressiveSources() throws -> [Source] {
        var sources: [Source] = []
        for (width, height) in [(37, 29), (131, 67)] {
            for restart in [0, 1, 7] {
                for channels in [1, 3] {
                    for script in [0, 1] {
                        let samples = photo(width: width, height: height, channels: channels, seed: UInt64(width * 100 + restart * 10 + script))
                        sources.append(
                            try written(width, height, "\(width)×\(height), \(channels) channels, script \(script), restart \(restart)") {
                                output, length in
                                test_jpeg_write_progressive(
                                    UInt32(width), UInt32(height), samples, Int32(channels), 85, Int32(restart), Int32(script), &output, &length)
                            })
                    }
                }
                // libjpeg's simple progression, and one scan per coefficient refined over 3 bits.
                let samples = photo(width: width, height: height, channels: 3, seed: UInt64(width + restart))
                for progression in [1, 3] {
                    sources.append(
                        try written(width, height, "\(width)×\(height), progression \(progression), restart \(restart)") { output, length in
                            test_jpeg_write_rgb(UInt32(width), UInt32(height), samples, 95, Int32(restart), Int32(progression), &output, &length)
                        })
                }
            }
        }
        return sources
    }

    /// Sequential files: interleaved and one scan per component, T.81's example tables and
    /// optimised ones, at quality 85 and 98 (larger values, so longer codes and more extra bits).
    static func sequentialSources() throws -> [Source] {
        var sources: [Source] = []
        for (width, height) in [(37, 29), (131, 67)] {
            for restart in [0, 1, 7] {
                for channels in [1, 3] {
                    for layout in 0..<4 {
                        let quality = layout % 2 == 0 ? 85 : 98
                        let samples = photo(width: width, height: height, channels: channels, seed: UInt64(width * 1000 + restart * 10 + layout))
                        let name = "sequential \(width)×\(height), \(channels) channels, layout \(layout), restart \(restart)"
                        var source = try written(width, height, name) { output, length in
                            test_jpeg_write_sequential(
                                UInt32(width), UInt32(height), samples, Int32(channels), Int32(quality), Int32(restart), Int32(layout), &output,
                                &length)
                        }
                        // libjpeg's fast path needs 512 bytes a block of the MCU left in the data
                        // (a scan of one component has MCUs of one block).
                        let blocks = channels == 3 && layout & 2 == 0 ? 6 : 1
                        source.carefulLibjpeg = restart > 0 || source.bytes.count < 512 * blocks
                        sources.append(source)
                    }
                }
            }
        }
        return sources
    }

    static func sources() throws -> [Source] { try progressiveSources() + sequentialSources() }

    /// The bytes a test writer makes of a `width`×`height` image (`write` returns its status and
    /// fills its malloc'd output).
    static func written(
        _ width: Int, _ height: Int, _ description: String, _ write: (inout UnsafeMutablePointer<UInt8>?, inout UInt) -> Int32
    ) throws -> Source {
        var output: UnsafeMutablePointer<UInt8>?
        var length: UInt = 0
        try #require(write(&output, &length) == 0, "\(description)")
        defer { test_png_free(output) }
        return Source(description: description, bytes: Data(UnsafeBufferPointer(start: output, count: Int(length))), width: width, height: height)
    }

    /// A decode's settings beyond the defaults, and its name for messages.
    struct Variant: CustomStringConvertible {
        let description: String
        var apply: @Sendable (inout DecodingOptions, _ width: Int, _ height: Int) -> Void = { _, _, _ in }
    }

    /// Full size, and what makes libjpeg keep less of what it reads: a scaled decode, 1/8 (DCs
    /// only), a crop (rows above and below skipped: decoded and dropped) and luma only (chroma
    /// decoded and dropped).
    static let variants = [
        Variant(description: "full size"),
        Variant(description: "scaled") { options, _, _ in options.resize = .fit(width: 20, height: 20) },
        Variant(description: "1/8") { options, width, height in
            options.resize = .fit(width: (width + 7) / 8, height: (height + 7) / 8)
            options.fastShrinkOnLoad = true
        },
        Variant(description: "cropped") { options, _, _ in options.region = CropRegion(width: .fraction(0.5), height: .fraction(0.3)) },
        Variant(description: "luma") { options, _, _ in options.grayscale = true }
    ]

    static func options(library: Bool, partial: Bool = false) -> DecodingOptions {
        var options = DecodingOptions(allowsPartialImages: partial)
        options.limits.maxProgressiveScans = 2_000
        options.tuning.libjpegEntropyDecoders = library
        return options
    }

    typealias Outcome = Result<DecodedImage, ImageCodecError>

    /// The decode's pixels and warnings, or its error.
    static func outcome(_ bytes: Data, of source: Source, library: Bool, partial: Bool = false, variant: Variant = variants[0]) -> Outcome {
        Result { () throws(ImageCodecError) in
            var options = options(library: library, partial: partial)
            variant.apply(&options, source.width, source.height)
            return try ImageDecoder(options: options).decodeImage(bytes)
        }
    }

    /// The same warnings of damage in the same order. Junk bytes before a marker (EXTRANEOUS_DATA,
    /// tolerated, no pixel lost) are reported by libjpeg only when its own read-ahead did not
    /// swallow them, so their count depends on how far a reader looks ahead; and only the first
    /// few warnings are recorded, so one list may stop earlier.
    static func sameDamage(_ ours: [DecodingWarning], _ libjpeg: [DecodingWarning], ignoringBadCodes: Bool = false) -> Bool {
        let ignored = [Int(JWRN_EXTRANEOUS_DATA.rawValue)] + (ignoringBadCodes ? [Int(JWRN_HUFF_BAD_CODE.rawValue)] : [])
        let (a, b) = (ours.map(\.code).filter { !ignored.contains($0) }, libjpeg.map(\.code).filter { !ignored.contains($0) })
        if ours.count < Int(IEC_WARNINGS_MAX) && libjpeg.count < Int(IEC_WARNINGS_MAX) { return a == b }
        return a.starts(with: b) || b.starts(with: a)
    }

    /// The strict decode's error for a code no Huffman table has (libjpeg's message).
    static func isBadCode(_ error: ImageCodecError) -> Bool {
        if case .corruptData(let message) = error { return message.contains("bad Huffman code") }
        return false
    }

    @Test("every scan kind decodes to libjpeg's pixels, at full size, scaled, cropped and luma only")
    func sameAsLibjpeg() throws {
        let sources = try Self.sources()
        #expect(sources.count == 36 + 48)
        for source in sources {
            for variant in Self.variants {
                let ours = try Self.outcome(source.bytes, of: source, library: false, variant: variant).get()
                let libjpeg = try Self.outcome(source.bytes, of: source, library: true, variant: variant).get()
                #expect(ours.bitmap == libjpeg.bitmap, "\(source), \(variant)")
                #expect(ours.warnings.isEmpty && libjpeg.warnings.isEmpty, "\(source), \(variant)")
            }
        }
    }

    @Test("the engine's decoder is the one reading the scans, unless libjpeg's is asked for")
    func takesOver() throws {
        for source in [try #require(try Self.progressiveSources().first), try #require(try Self.sequentialSources().first)] {
            for library in [false, true] {
                try source.bytes.withUnsafeBytes { bytes in
                    let decompressor = try JPEGDecompressor(bytes: bytes, strict: true, limits: DecodingLimits())
                    if library { decompressor.useLibraryEntropyDecoders() }
                    try decompressor.readHeader()
                    try decompressor.startDecompress()
                    #expect(decompressor.decodedWithEngineEntropy == !library, "\(source)")
                }
            }
        }
    }

    @Test("damaged and cut-short data fails the same way strictly, and recovers to the same pixels and warnings leniently")
    func damage() throws {
        var random = SeededGenerator(seed: 0x5CA7)
        for source in try Self.sources() {
            let bytes = [UInt8](source.bytes)
            let firstScan = try #require(JPEGDamagePolicyTests.markers(0xDA, in: bytes).first)
            var damaged: [[UInt8]] = []
            for _ in 0..<4 {
                // Flipped bits in the scans' data (markers may be made or broken: both are damage).
                var copy = bytes
                for _ in 0..<3 {
                    copy[Int.random(in: (firstScan + 20)..<(bytes.count - 2), using: &random)] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
                }
                damaged.append(copy)
                // Cut anywhere in the scans.
                damaged.append(Array(bytes.prefix(Int.random(in: (firstScan + 20)..<(bytes.count - 2), using: &random))))
            }
            for (index, file) in damaged.enumerated() {
                let data = Data(file)
                let message: Comment = "\(source), damage \(index), seed \(random.seed)"
                // Where libjpeg took its fast path, it passed a bad code without a warning: the
                // engine's strict decode fails there, and its lenient one warns once more.
                let quirk = !source.carefulLibjpeg
                for partial in [false, true] {
                    let ours = Self.outcome(data, of: source, library: false, partial: partial)
                    let libjpeg = Self.outcome(data, of: source, library: true, partial: partial)
                    switch (ours, libjpeg) {
                    case (.success(let ours), .success(let libjpeg)):
                        #expect(ours.bitmap == libjpeg.bitmap, message)
                        #expect(
                            Self.sameDamage(ours.warnings, libjpeg.warnings, ignoringBadCodes: quirk),
                            "\(ours.warnings) against \(libjpeg.warnings): \(message)")
                    case (.failure(let ours), .failure(let libjpeg)):
                        #expect(ours == libjpeg || (quirk && Self.isBadCode(ours)), "engine \(ours) against libjpeg \(libjpeg): \(message)")
                    case (.failure(let ours), .success) where quirk && Self.isBadCode(ours):
                        break
                    default:
                        Issue.record("engine \(ours) against libjpeg \(libjpeg): \(message)")
                    }
                }
            }
        }
    }

    /// A 256×192 baseline file (39 KB: libjpeg reads most of it on its fast path) and where its
    /// entropy-coded data starts.
    static func largeBaseline() throws -> (Source, Int) {
        let (width, height) = (256, 192)
        let samples = photo(width: width, height: height, channels: 3, seed: 0xBAD)
        let source = try written(width, height, "baseline") { output, length in
            test_jpeg_write_sequential(UInt32(width), UInt32(height), samples, 3, 90, 0, 0, &output, &length)
        }
        let bytes = [UInt8](source.bytes)
        let scan = try #require(JPEGDamagePolicyTests.markers(0xDA, in: bytes).first)
        return (source, scan + 2 + Int(bytes[scan + 2]) << 8 + Int(bytes[scan + 3]))
    }

    @Test("a bad Huffman code is damage wherever it is: a strict decode fails, a lenient one gives libjpeg's pixels and says so")
    func badCodeFarFromTheEnd() throws {
        let (source, data) = try Self.largeBaseline()
        var bytes = [UInt8](source.bytes)
        // 48 one bits (stuffed 0xFF bytes): any code read from within them runs to 17 ones,
        // which no table has. libjpeg's fast path reads there (more than 512 bytes a block left).
        let planted = data + 300
        bytes.replaceSubrange(planted..<(planted + 12), with: [UInt8](repeating: 0, count: 12).enumerated().map { $0.offset % 2 == 0 ? 0xFF : 0x00 })
        try #require(bytes.count - planted > 512 * 6 * 4)
        let damaged = Data(bytes)

        let strict = Self.outcome(damaged, of: source, library: false)
        guard case .failure(let error) = strict else { Issue.record("decoded: \(strict)"); return }
        #expect(Self.isBadCode(error), "\(error)")

        let ours = try Self.outcome(damaged, of: source, library: false, partial: true).get()
        let libjpeg = try Self.outcome(damaged, of: source, library: true, partial: true).get()
        #expect(ours.bitmap == libjpeg.bitmap)
        #expect(ours.warnings.first?.code == Int(JWRN_HUFF_BAD_CODE.rawValue), "\(ours.warnings)")
    }

    @Test("fill bytes before a stuffed 0xFF change no pixel, wherever they are")
    func fillBeforeStuffedByte() throws {
        let (source, data) = try Self.largeBaseline()
        var bytes = [UInt8](source.bytes)
        // Stuffed 0xFF bytes (FF 00) where libjpeg's fast path reads, each given a fill byte
        // (FF FF 00, read as one 0xFF, as libjpeg's careful path reads it): the same bits.
        let stuffed = (data..<(bytes.count - 512 * 6 * 2)).filter { bytes[$0] == 0xFF && bytes[$0 + 1] == 0x00 }
        try #require(stuffed.count >= 3)
        for at in stuffed.prefix(3).reversed() { bytes.insert(0xFF, at: at) }
        let clean = try Self.outcome(source.bytes, of: source, library: false).get()
        let filled = try Self.outcome(Data(bytes), of: source, library: false).get()
        #expect(filled.bitmap == clean.bitmap)
        #expect(filled.warnings.isEmpty, "\(filled.warnings)")
    }

    @Test("the rows a crop skips are read with cancellation checks: a skip stops when the task is cancelled")
    func skipStops() throws {
        // 1024×512 gray: 128×64 MCUs of one block, twice the decoder's interval between its
        // calls of the progress monitor, where the shim asks the stop probe. Gray, so that the
        // skip reads no row of pixels either (no context rows for upsampling): only MCUs.
        let (width, height) = (1024, 512)
        let samples = Self.photo(width: width, height: height, channels: 1, seed: 0x5C1F)
        let source = try Self.written(width, height, "gray") { output, length in
            test_jpeg_write_sequential(UInt32(width), UInt32(height), samples, 1, 75, 0, 0, &output, &length)
        }
        for stop in [false, true] {
            try source.bytes.withUnsafeBytes { bytes in
                let base = try #require(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self))
                // A probe that always says stop, or never: no capture, so a C function pointer.
                let probe: iec_stop_probe = stop ? { 1 } : { 0 }
                let decoder = try #require(iec_jpeg_decoder_create(base, bytes.count, 1, 0, 0, 0, probe))
                defer { iec_jpeg_decoder_destroy(decoder) }
                // A single scan: libjpeg reads none of it, and asks no probe, before the skip.
                #expect(iec_jpeg_read_header(decoder) == IEC_OK)
                #expect(iec_jpeg_start_decompress(decoder) == IEC_OK)
                var skipped: UInt32 = 0
                let status = iec_jpeg_skip_scanlines(decoder, UInt32(height - 8), &skipped)
                #expect(status == (stop ? IEC_CANCELLED : IEC_OK), "stop \(stop)")
                #expect(skipped == (stop ? 0 : UInt32(height - 8)), "stop \(stop)")
            }
        }
    }
}
