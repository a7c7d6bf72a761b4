import CTestImageWriter
import Foundation
import Testing
import TestSupport
@testable import ImageCodec

/// Files whose few hundred KB ask the libraries for megabytes or gigabytes (zlib bombs in text
/// chunks, thousands of markers), each with what it must give and what the libraries may
/// allocate for it, measured by the shim's counting allocator: the header read at most
/// `DecodePlan.headerOverheadBytes` beyond the ICC profile it keeps, the decode at most its
/// plan plus `DecodePlan.decodeOverheadBytes`.
@Suite("Hostile input: bounded header reads and decodes")
struct HostileInputBoundsTests {
    /// What one file cost and gave.
    struct Measurement {
        var headerPeak = 0
        var headerBound = 0
        var decodePeak = 0
        var decodeBound = 0
        var result: Result<DecodedImage, ImageCodecError>
    }

    static func measure(_ data: Data, limits: DecodingLimits = DecodingLimits()) -> Measurement {
        let options = DecodingOptions(maxPixelSize: 64, limits: limits)
        var measurement = Measurement(result: .failure(.truncatedData))
        do throws(ImageCodecError) {
            let source = try ImageSource(data: data, limits: limits)
            measurement.headerPeak = source.headerPeakBytes
            measurement.headerBound = DecodePlan.headerOverheadBytes + 2 * min(source.profileBytes, limits.maxICCProfileBytes)
            let plan = try source.plan(options)
            measurement.decodeBound = plan.memoryBytes + DecodePlan.decodeOverheadBytes
            let (image, memory) = try source.decodeMeasured(options)
            measurement.decodePeak = memory.peak
            measurement.result = .success(image)
        } catch {
            measurement.result = .failure(error)
        }
        return measurement
    }

    /// Asserts the bounds, and that the file decodes to exactly the clean file's pixels.
    static func expectClean(_ data: Data, like clean: Data, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let measurement = measure(data)
        print(
            "\(name): \(data.count) bytes, header read \(measurement.headerPeak) B (bound \(measurement.headerBound)), "
                + "decode \(measurement.decodePeak) B (bound \(measurement.decodeBound))")
        #expect(measurement.headerPeak <= measurement.headerBound, "\(name): header read", sourceLocation: sourceLocation)
        #expect(measurement.decodePeak <= measurement.decodeBound, "\(name): decode", sourceLocation: sourceLocation)
        let image = try measurement.result.get()
        #expect(
            image.bitmap == (try ImageDecoder(options: DecodingOptions(maxPixelSize: 64)).decode(clean)), "\(name): pixels",
            sourceLocation: sourceLocation)
    }

    // MARK: PNG

    static func chunk(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        let crc = (typeBytes + payload).withUnsafeBytes { CRC32.checksum($0) }
        return bigEndian(UInt32(payload.count)) + typeBytes + payload + bigEndian(crc)
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }

    /// A 1×1 RGB PNG with `extra` chunks between IHDR and IDAT.
    static func png(_ extra: [[UInt8]] = []) -> Data {
        let header = bigEndian(1) + bigEndian(1) + [8, 2, 0, 0, 0]
        let pixels = deflate([0, 0x80, 0x40, 0x20])
        return Data(
            [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + extra.joined()
                + chunk("IDAT", pixels) + chunk("IEND", []))
    }

    static func deflate(_ bytes: [UInt8]) -> [UInt8] {
        var output: UnsafeMutablePointer<UInt8>?
        var length = 0
        guard test_deflate(bytes, bytes.count, &output, &length) == 0, let output else { return [] }
        defer { test_png_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: length))
    }

    /// 1,000,000 bytes of text deflated to 1 KB: under the 1 MiB the shim lets libpng allocate
    /// for a chunk, so only skipping the chunk keeps it from being inflated and stored.
    static let textBomb = deflate([UInt8](repeating: 0x41, count: 1_000_000))

    @Test("zTXt, compressed iTXt, tEXt, sPLT and private chunks are skipped unread")
    func ancillaryChunkBombs() throws {
        let clean = Self.png()
        let bombs: [(String, [[UInt8]])] = [
            ("zTXt", (0..<20).map { Self.chunk("zTXt", Array("k\($0)".utf8) + [0, 0] + Self.textBomb) }),
            ("iTXt", (0..<20).map { Self.chunk("iTXt", Array("k\($0)".utf8) + [0, 1, 0, 0, 0] + Self.textBomb) }),
            ("tEXt", (0..<4).map { Self.chunk("tEXt", Array("k\($0)".utf8) + [0] + [UInt8](repeating: 0x41, count: 512 << 10)) }),
            ("sPLT", (0..<3).map { Self.chunk("sPLT", Array("p\($0)".utf8) + [0, 8] + [UInt8](repeating: 7, count: 6 * 100_000)) }),
            ("private", (0..<3).map { _ in Self.chunk("prVt", [UInt8](repeating: 9, count: 1 << 20)) })
        ]
        for (name, chunks) in bombs {
            try Self.expectClean(Self.png(chunks), like: clean, name)
        }
    }

    /// An iCCP whose profile declares (and inflates to) `size` bytes.
    static func iccBomb(size: Int) -> [UInt8] {
        var profile = [UInt8](repeating: 0, count: size)
        profile.replaceSubrange(0..<4, with: bigEndian(UInt32(size)))
        profile.replaceSubrange(12..<20, with: Array("mntrRGB ".utf8))
        profile.replaceSubrange(20..<24, with: Array("XYZ ".utf8))
        profile.replaceSubrange(36..<40, with: Array("acsp".utf8))
        return Self.chunk("iCCP", Array("icc".utf8) + [0, 0] + deflate(profile))
    }

    @Test("an iCCP over the profile limit is ignored with a warning, and the pixels read as sRGB", arguments: [8 << 20, 3 << 20])
    func iccBomb(size: Int) throws {
        let data = Self.png([Self.iccBomb(size: size)])
        try Self.expectClean(data, like: Self.png(), "iCCP of \(size) bytes")
        let image = try ImageDecoder().decodeImage(data)
        #expect(image.warnings.contains(ICCProfileLimit.warning(DecodingLimits())), "\(image.warnings)")
    }

    @Test("1,000 chunks before the image data decode; one more is over the limit")
    func manyChunks() throws {
        let empty = Self.chunk("prVt", [])
        try Self.expectClean(Self.png(Array(repeating: empty, count: 999)), like: Self.png(), "999 + IHDR chunks")
        let over = Self.measure(Self.png(Array(repeating: empty, count: 1_000)))
        #expect(throws: ImageCodecError.limitExceeded("PNG has more than 1000 chunks before its image data")) { try over.result.get() }
    }

    @Test("an eXIf is read in place for its orientation, and only when its CRC is right")
    func exifInPlace() throws {
        // TIFF, little-endian, one IFD entry: orientation 6 (rotate 90° clockwise to display).
        let tiff: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0]
        let exif = Self.chunk("eXIf", tiff + [UInt8](repeating: 0, count: 1 << 20))
        let header = try ImageDecoder.header(of: Self.png([exif]))
        #expect(header.orientation == .right)
        var damaged = exif
        damaged[damaged.count - 1] ^= 1
        #expect(try ImageDecoder.header(of: Self.png([damaged])).orientation == .up)
        let measurement = Self.measure(Self.png([exif]))
        #expect(measurement.headerPeak <= DecodePlan.headerOverheadBytes, "\(measurement.headerPeak)")
    }

    // MARK: JPEG

    /// A 16×16 JPEG, made afresh for each use: a `static let` Data would outlive the run in a
    /// form LeakSanitizer cannot see a pointer in (Swift packs the enum payload), and the ASan
    /// run would report it as leaked.
    static func cleanJPEG() throws -> Data {
        try ImageEncoder.jpeg(TestImages.make(width: 16, height: 16, format: .rgb) { x, y in [UInt8(x * 16), UInt8(y * 16), 90] })
    }

    /// The clean JPEG with `count` segments of `marker` inserted after SOI.
    static func jpeg(marker: UInt8, count: Int, payload: (Int) -> [UInt8]) throws -> Data {
        let cleanJPEG = try Self.cleanJPEG()
        var segments: [UInt8] = []
        for index in 0..<count {
            let body = payload(index)
            segments += [0xFF, marker, UInt8((body.count + 2) >> 8), UInt8((body.count + 2) & 0xFF)] + body
        }
        return cleanJPEG.prefix(2) + Data(segments) + cleanJPEG.dropFirst(2)
    }

    @Test("1,000 APP2 ICC chunks past the profile limit are dropped whole, with a warning")
    func manyICCChunks() throws {
        let data = try Self.jpeg(marker: 0xE2, count: 1_000) { index in
            Array("ICC_PROFILE".utf8) + [0, UInt8(index % 255 + 1), 255] + [UInt8](repeating: 3, count: 4_000)
        }
        try Self.expectClean(data, like: try Self.cleanJPEG(), "1,000 APP2")
        #expect(try ImageDecoder().decodeImage(data).warnings.contains(ICCProfileLimit.warning(DecodingLimits())))
    }

    @Test("COM markers and every EXIF APP1 after the first are skipped unread")
    func manyMarkers() throws {
        let comments = try Self.jpeg(marker: 0xFE, count: 1_000) { _ in [UInt8](repeating: 0x43, count: 4_000) }
        try Self.expectClean(comments, like: try Self.cleanJPEG(), "1,000 COM")
        let exif = try Self.jpeg(marker: 0xE1, count: 1_000) { _ in Array("Exif".utf8) + [0, 0] + [UInt8](repeating: 0, count: 4_000) }
        try Self.expectClean(exif, like: try Self.cleanJPEG(), "1,000 APP1")
        let others = try Self.jpeg(marker: 0xEB, count: 1_000) { _ in [UInt8](repeating: 0x44, count: 4_000) }
        try Self.expectClean(others, like: try Self.cleanJPEG(), "1,000 APP11")
    }

    /// A `width`×`height` RGB photo in 1 + 189 × `bits` progressive scans.
    static func manyScans(bits: Int, width: Int = 64, height: Int = 48) throws -> Data {
        let photo = TestImages.make(width: width, height: height, format: .rgb) { x, y in
            [UInt8(truncatingIfNeeded: x * 4), UInt8(truncatingIfNeeded: y * 5), UInt8(truncatingIfNeeded: x ^ y)]
        }
        var output: UnsafeMutablePointer<UInt8>?
        var length: UInt = 0
        try #require(test_jpeg_write_rgb(UInt32(width), UInt32(height), photo.pixels, 90, 0, Int32(bits), &output, &length) == 0)
        defer { test_png_free(output) }
        return Data(bytes: try #require(output), count: Int(length))
    }

    @Test("a progressive JPEG over the scan limit is refused; under it, it decodes")
    func scanLimit() throws {
        let data = try Self.manyScans(bits: 3) // 568 scans
        #expect(throws: ImageCodecError.corruptData("Progressive JPEG has more than 500 scans")) { try ImageDecoder().decode(data) }
        let generous = DecodingLimits(maxProgressiveScans: 600)
        #expect(try ImageDecoder(options: DecodingOptions(limits: generous)).decode(data).width == 64)
    }

    @Test("libjpeg's own ceiling (max_memory_to_use) refuses a coefficient buffer over it")
    func libjpegMemoryCeiling() throws {
        // 256×256 at 4:2:0 holds 256 × 256 × 1.5 × 2 bytes of coefficients: 192 KB, more block
        // rows than libjpeg accesses at once, so under the ceiling it would need a backing store.
        let data = try Self.manyScans(bits: 1, width: 256, height: 256)
        let result = data.withUnsafeBytes { (bytes) -> Result<Int, ImageCodecError> in
            Result { () throws(ImageCodecError) in
                let decompressor = try JPEGDecompressor(bytes: bytes, strict: true, limits: DecodingLimits(), maxMemory: 100_000)
                try decompressor.readHeader()
                try decompressor.startDecompress()
                return 0
            }
        }
        #expect(throws: ImageCodecError.tooLarge(width: 256, height: 256, limit: DecodingLimits().maxPixelCount)) { try result.get() }
    }

    @Test("a header that understates what its data needs fails against the plan's ceiling, not the process")
    func decodeCeiling() throws {
        let data = try Self.manyScans(bits: 1)
        let source = try ImageSource(data: data)
        let options = DecodingOptions(maxPixelSize: 64)
        let plan = try source.plan(options)
        // The decode's own ceiling, lowered below what libjpeg needs for this file's buffers.
        let result = Result { () throws(ImageCodecError) in
            try source.decodeMeasured(options, libraryCeiling: plan.memoryBytes / 4).image
        }
        #expect(throws: ImageCodecError.self) { try result.get() }
        if case .failure(let error) = result, case .limitExceeded = error {} else { Issue.record("expected limitExceeded, got \(result)") }
    }
}

@Suite("One header read per image")
struct ImageSourceTests {
    @Test(
        "plans read nothing; the first decode goes on from the header read (libheif's reading the source's bytes in place), a second one reads again"
    )
    func oneHeaderRead() throws {
        for data in [try HostileInputBoundsTests.cleanJPEG(), HostileInputBoundsTests.png(), try HEIFFixtures.data("kite.heic")] {
            let source = try ImageSource(data: data)
            let options = DecodingOptions(resize: .fill(width: 8, height: 4))
            let plan = try source.plan(options)
            #expect(try source.plan(DecodingOptions(maxPixelSize: 2)).width <= 2)
            let first = try source.decode(options)
            #expect(source.headerReads == 1)
            #expect((first.bitmap.width, first.bitmap.height) == (plan.width, plan.height))
            #expect(try source.decode(options).bitmap == first.bitmap)
            #expect(source.headerReads == 2)
            #expect(first.bitmap == (try ImageDecoder(options: options).decode(data)))
        }
    }

    @Test("a decode under other limits reads the header under those")
    func otherLimits() throws {
        let source = try ImageSource(data: HostileInputBoundsTests.cleanJPEG())
        let strict = DecodingOptions(limits: DecodingLimits(maxPixelCount: 100))
        #expect(throws: ImageCodecError.tooLarge(width: 16, height: 16, limit: 100)) { try source.decode(strict) }
        #expect(try source.decode(DecodingOptions()).bitmap.width == 16)
        #expect(source.headerReads == 1, "the failed decode checked its limits before taking a reader")
    }

    @Test("an AVIF, whose header read keeps no reader, is read again under other limits: the container walk runs under those")
    func avifUnderOtherLimits() throws {
        // A 660-byte Display P3 profile: the walk refuses it under a 600-byte limit.
        let source = try ImageSource(data: try HEIFFixtures.data("kite-p3.avif"))
        #expect(try source.decode(DecodingOptions()).bitmap.width == 480)
        #expect(source.headerReads == 1, "under the header read's limits its walk holds: nothing is read again")
        var limits = DecodingLimits()
        limits.maxICCProfileBytes = 600
        #expect {
            try source.decode(DecodingOptions(limits: limits))
        } throws: { error in
            guard case .limitExceeded(let message) = error as? ImageCodecError else { return false }
            return message.hasPrefix("HEIF: ")
        }
        #expect(source.headerReads == 2)
    }
}
