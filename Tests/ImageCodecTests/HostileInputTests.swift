import CTestImageWriter
import Foundation
import Testing
import TestSupport
@testable import ImageCodec

/// Truncated, corrupt and hostile files: each must give a typed error (or, for undetectable
/// damage, an image of the declared size) and never a crash, hang or huge allocation.
@Suite("Hostile input")
struct HostileInputTests {
    static let photo = TestImages.make(width: 120, height: 90, format: .rgb) { x, y in
        [UInt8(truncatingIfNeeded: x * 2 + y), UInt8(truncatingIfNeeded: y * 3), UInt8(truncatingIfNeeded: x ^ y)]
    }

    static func inputs() throws -> [(String, Data)] {
        let alpha = TestImages.make(width: 120, height: 90, format: .rgba) { x, y in [UInt8(x), UInt8(y), 9, UInt8(x + y)] }
        return [
            ("baseline JPEG", try ImageEncoder.jpeg(photo)),
            ("progressive JPEG", try ImageEncoder.jpeg(photo, options: JPEGEncodingOptions(progressive: true))),
            ("PNG", try ImageEncoder.png(alpha)),
            ("Adam7 PNG", try interlacedPNG())
        ]
    }

    @Test("empty and random data are unsupported formats")
    func emptyAndRandom() {
        #expect(throws: ImageCodecError.unsupportedFormat(.empty)) { try ImageDecoder().decode(Data()) }
        #expect(throws: ImageCodecError.unsupportedFormat(.empty)) { try ImageDecoder.header(of: Data()) }
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<50 {
            let bytes = Data((0..<Int.random(in: 1...512, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
            guard bytes.first != 0xFF && bytes.first != 0x89 else { continue }
            #expect(throws: ImageCodecError.self) { try ImageDecoder().decode(bytes) }
        }
        #expect(throws: ImageCodecError.unsupportedFormat(.bmp)) { try ImageDecoder().decode(Data("BM\u{1}\u{0}\u{1}\u{0}".utf8)) }
        // A GIF cut inside its logical screen descriptor.
        #expect(throws: ImageCodecError.truncatedData) { try ImageDecoder().decode(Data("GIF89a\u{1}\u{0}\u{1}\u{0}".utf8)) }
    }

    @Test("valid signatures followed by garbage are corrupt data")
    func signatureThenGarbage() {
        var generator = SeededGenerator(seed: 11)
        for prefix in [[0xFF, 0xD8, 0xFF], [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]] as [[UInt8]] {
            for _ in 0..<30 {
                let tail = (0..<Int.random(in: 0...300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                let data = Data(prefix + tail)
                #expect(throws: ImageCodecError.self) { try ImageDecoder().decode(data) }
            }
        }
    }

    @Test("truncation at any offset is an error, never a grey-filled image")
    func truncation() throws {
        for (name, data) in try Self.inputs() {
            let step = max(1, data.count / 97)
            var offsets = Array(stride(from: 1, to: data.count, by: step))
            offsets += [data.count - 1, data.count - 2, data.count - 12]
            for offset in offsets {
                let truncated = data.prefix(offset)
                do {
                    let image = try ImageDecoder().decode(truncated)
                    Issue.record("\(name) truncated to \(offset)/\(data.count) decoded as \(image.width)×\(image.height)")
                } catch .truncatedData, .corruptData, .unsupportedFormat {
                    // expected
                } catch {
                    Issue.record("\(name) truncated to \(offset): unexpected \(error)")
                }
            }
        }
    }

    @Test("a truncated JPEG is accepted only when partial images are allowed")
    func partialImagesOption() throws {
        let data = try ImageEncoder.jpeg(Self.photo)
        let truncated = data.prefix(data.count * 2 / 3)
        #expect(throws: ImageCodecError.truncatedData) { try ImageDecoder().decode(truncated) }
        let partial = try ImageDecoder(options: DecodingOptions(allowsPartialImages: true)).decode(truncated)
        #expect(partial.width == 120 && partial.height == 90)
    }

    @Test("flipped bytes give a typed error or an image of the declared size")
    func flippedBytes() throws {
        var generator = SeededGenerator(seed: 3)
        for (name, data) in try Self.inputs() {
            for _ in 0..<150 {
                var bytes = [UInt8](data)
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] ^= UInt8.random(in: 1...255, using: &generator)
                }
                do {
                    let image = try ImageDecoder().decode(Data(bytes))
                    // Damage that no checksum covers (JPEG entropy data) can go undetected;
                    // the result must still be a well-formed bitmap.
                    #expect(image.pixels.count == image.width * image.height * image.format.channels, "\(name)")
                } catch {
                    _ = error as ImageCodecError
                }
            }
        }
    }

    @Test("huge JPEG dimensions are refused before allocation", arguments: [false, true])
    func hugeJPEG(progressive: Bool) throws {
        let data = try ImageEncoder.jpeg(Self.photo, options: JPEGEncodingOptions(progressive: progressive))
        let huge = try Self.patchingJPEGSize(data, width: 65000, height: 65000)
        let header = try ImageDecoder.header(of: huge)
        #expect(header.width == 65000 && header.height == 65000)
        #expect(throws: ImageCodecError.tooLarge(width: 65000, height: 65000, limit: 250_000_000)) {
            try ImageDecoder().decode(huge)
        }
        let limited = DecodingOptions(limits: DecodingLimits(maxPixelCount: 10_000))
        #expect(throws: ImageCodecError.tooLarge(width: 120, height: 90, limit: 10_000)) {
            try ImageDecoder(options: limited).decode(data)
        }
    }

    @Test("zero JPEG dimensions are corrupt data")
    func zeroJPEG() throws {
        let data = try ImageEncoder.jpeg(Self.photo)
        for (width, height) in [(0, 90), (120, 0)] {
            #expect(throws: ImageCodecError.self) { try ImageDecoder().decode(try Self.patchingJPEGSize(data, width: width, height: height)) }
        }
    }

    @Test("huge, zero and out-of-range PNG dimensions are refused")
    func hugePNG() throws {
        let data = try ImageEncoder.png(Self.photo)
        #expect(throws: ImageCodecError.tooLarge(width: 65535, height: 65535, limit: 250_000_000)) {
            try ImageDecoder().decode(Self.patchingPNGSize(data, width: 65535, height: 65535))
        }
        for (width, height) in [(0, 90), (120, 0), (0x8000_0000, 1)] {
            #expect(throws: ImageCodecError.self) { try ImageDecoder().decode(Self.patchingPNGSize(data, width: width, height: height)) }
        }
    }

    @Test("an IDAT chunk whose CRC does not match is corrupt data that says so")
    func pngChecksum() throws {
        let intact = [UInt8](try ImageEncoder.png(Self.photo))
        #expect(try ImageDecoder().decode(Data(intact)).pixels == Self.photo.pixels)
        // Chunk layout: 4-byte length, "IDAT", data, then the 4-byte CRC of type and data.
        let type = try #require(Self.find(Array("IDAT".utf8), in: intact))
        let length = intact[type - 4..<type].reduce(0) { $0 << 8 | Int($1) }
        for byte in 0..<4 {
            var bytes = intact
            bytes[type + 4 + length + byte] ^= 0x01 // the data is untouched: only the checksum is wrong
            #expect {
                try ImageDecoder().decode(Data(bytes))
            } throws: { error in
                guard case .corruptData(let message) = error as? ImageCodecError else { return false }
                return message.contains("CRC")
            }
        }
    }

    // MARK: - Builders

    static func interlacedPNG() throws -> Data {
        // The engine never writes Adam7; reuse the test writer through the PNG matrix helper.
        let rows = photo.pixels
        var output: UnsafeMutablePointer<UInt8>?
        var length = 0
        try #require(test_png_write(120, 90, 8, 2, 1, rows, 360, nil, 0, nil, 0, -1, -1, 0, 0, &output, &length) == 0)
        defer { test_png_free(output) }
        return Data(bytes: output!, count: length)
    }

    static func find(_ needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        return (0...(bytes.count - needle.count)).first { bytes[$0..<$0 + needle.count].elementsEqual(needle) }
    }

    /// Rewrites the frame header (SOF0/SOF2) dimensions.
    static func patchingJPEGSize(_ data: Data, width: Int, height: Int) throws -> Data {
        var bytes = [UInt8](data)
        guard let offset = JPEGSampling.frameHeaderOffset(bytes) else { throw ImageCodecError.corruptData("test JPEG has no SOF") }
        bytes[offset + 5] = UInt8(height >> 8); bytes[offset + 6] = UInt8(height & 0xFF)
        bytes[offset + 7] = UInt8(width >> 8); bytes[offset + 8] = UInt8(width & 0xFF)
        return Data(bytes)
    }

    /// Rewrites IHDR width and height and fixes its CRC so only the size is wrong.
    static func patchingPNGSize(_ data: Data, width: Int, height: Int) -> Data {
        var bytes = [UInt8](data)
        for (index, value) in [width, height].enumerated() {
            for byte in 0..<4 { bytes[16 + index * 4 + byte] = UInt8(truncatingIfNeeded: value >> (24 - byte * 8)) }
        }
        let crc = CRC32.checksum(bytes[12..<29])
        for byte in 0..<4 { bytes[29 + byte] = UInt8(truncatingIfNeeded: crc >> (24 - UInt32(byte) * 8)) }
        return Data(bytes)
    }
}

/// PNG's CRC-32 (ISO 3309), for patching chunk headers in tests.
enum CRC32 {
    static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return crc ^ 0xFFFF_FFFF
    }
}
