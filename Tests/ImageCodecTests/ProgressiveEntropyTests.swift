import CImageCodecShim
import CTestImageWriter
import Foundation
import Testing
import TestSupport
@_spi(Tuning) @testable import ImageCodec

/// The engine's entropy decoder for progressive scans (`jpeg_progressive.c`) against
/// libjpeg-turbo's own, on the same files: every scan kind (DC and AC, first and refinement),
/// restart intervals, gray and 4:2:0 colour, sizes that end mid-block and mid-MCU, and damaged
/// data, where both must fail or recover in the same way.
@Suite("Progressive entropy decoding")
struct ProgressiveEntropyTests {
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
    }

    /// Progressive files of each kind the writers make.
    static func sources() throws -> [Source] {
        var sources: [Source] = []
        for (width, height) in [(37, 29), (131, 67)] {
            for restart in [0, 1, 7] {
                for channels in [1, 3] {
                    for script in [0, 1] {
                        let samples = photo(width: width, height: height, channels: channels, seed: UInt64(width * 100 + restart * 10 + script))
                        sources.append(
                            try written("\(width)×\(height), \(channels) channels, script \(script), restart \(restart)") { output, length in
                                test_jpeg_write_progressive(
                                    UInt32(width), UInt32(height), samples, Int32(channels), 85, Int32(restart), Int32(script), &output, &length)
                            })
                    }
                }
                // libjpeg's simple progression, and one scan per coefficient refined over 3 bits.
                let samples = photo(width: width, height: height, channels: 3, seed: UInt64(width + restart))
                for progression in [1, 3] {
                    sources.append(
                        try written("\(width)×\(height), progression \(progression), restart \(restart)") { output, length in
                            test_jpeg_write_rgb(UInt32(width), UInt32(height), samples, 95, Int32(restart), Int32(progression), &output, &length)
                        })
                }
            }
        }
        return sources
    }

    /// The bytes a test writer makes (`write` returns its status and fills its malloc'd output).
    static func written(
        _ description: String, _ write: (inout UnsafeMutablePointer<UInt8>?, inout UInt) -> Int32
    ) throws -> Source {
        var output: UnsafeMutablePointer<UInt8>?
        var length: UInt = 0
        try #require(write(&output, &length) == 0, "\(description)")
        defer { test_png_free(output) }
        return Source(description: description, bytes: Data(UnsafeBufferPointer(start: output, count: Int(length))))
    }

    static func options(library: Bool, partial: Bool = false, resize: Resize? = nil) -> DecodingOptions {
        var options = DecodingOptions(resize: resize, allowsPartialImages: partial)
        options.limits.maxProgressiveScans = 2_000
        options.tuning.libjpegProgressiveDecoder = library
        return options
    }

    /// The decode's pixels and warnings, or its error.
    static func outcome(_ bytes: Data, library: Bool, partial: Bool = false, resize: Resize? = nil) -> Result<DecodedImage, ImageCodecError> {
        Result { () throws(ImageCodecError) in
            try ImageDecoder(options: options(library: library, partial: partial, resize: resize)).decodeImage(bytes)
        }
    }

    /// The same warnings of damage in the same order. Junk bytes before a marker (EXTRANEOUS_DATA,
    /// tolerated, no pixel lost) are reported by libjpeg only when its own read-ahead did not
    /// swallow them, so their count depends on how far a reader looks ahead; and only the first
    /// few warnings are recorded, so one list may stop earlier.
    static func sameDamage(_ ours: [DecodingWarning], _ libjpeg: [DecodingWarning]) -> Bool {
        let extraneous = Int(JWRN_EXTRANEOUS_DATA.rawValue)
        let (a, b) = (ours.map(\.code).filter { $0 != extraneous }, libjpeg.map(\.code).filter { $0 != extraneous })
        if ours.count < Int(IEC_WARNINGS_MAX) && libjpeg.count < Int(IEC_WARNINGS_MAX) { return a == b }
        return a.starts(with: b) || b.starts(with: a)
    }

    @Test("every scan kind decodes to libjpeg's pixels, at full size and scaled")
    func sameAsLibjpeg() throws {
        let sources = try Self.sources()
        #expect(sources.count == 36)
        for source in sources {
            for resize: Resize? in [nil, .fit(width: 20, height: 20)] {
                let ours = try Self.outcome(source.bytes, library: false, resize: resize).get()
                let libjpeg = try Self.outcome(source.bytes, library: true, resize: resize).get()
                #expect(ours.bitmap == libjpeg.bitmap, "\(source)")
                #expect(ours.warnings.isEmpty && libjpeg.warnings.isEmpty, "\(source)")
            }
        }
    }

    @Test("the engine's decoder is the one reading the scans, unless libjpeg's is asked for")
    func takesOver() throws {
        let source = try #require(try Self.sources().first)
        for library in [false, true] {
            try source.bytes.withUnsafeBytes { bytes in
                let decompressor = try JPEGDecompressor(bytes: bytes, strict: true, limits: DecodingLimits())
                if library { decompressor.useLibraryProgressiveDecoder() }
                try decompressor.readHeader()
                try decompressor.startDecompress()
                #expect(decompressor.decodedProgressiveScans == !library)
            }
        }
    }

    @Test("damaged and cut-short data fails the same way strictly, and recovers to the same pixels and warnings leniently")
    func damage() throws {
        var random = SeededGenerator(seed: 0x5CA7)
        for source in try Self.sources() {
            let bytes = [UInt8](source.bytes)
            let firstScan = try #require((0..<(bytes.count - 1)).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xDA })
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
                for partial in [false, true] {
                    let ours = Self.outcome(data, library: false, partial: partial)
                    let libjpeg = Self.outcome(data, library: true, partial: partial)
                    switch (ours, libjpeg) {
                    case (.success(let ours), .success(let libjpeg)):
                        #expect(ours.bitmap == libjpeg.bitmap, message)
                        #expect(Self.sameDamage(ours.warnings, libjpeg.warnings), "\(ours.warnings) against \(libjpeg.warnings): \(message)")
                    case (.failure(let ours), .failure(let libjpeg)):
                        #expect(ours == libjpeg, message)
                    default:
                        Issue.record("engine \(ours) against libjpeg \(libjpeg): \(message)")
                    }
                }
            }
        }
    }
}
