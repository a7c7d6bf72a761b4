import Foundation
import Testing
import TestSupport
@testable import ImageCodec

/// The container walker in front of libheif (`HEIFContainer`): every hostile construction in
/// `Tests/Fixtures/heif/hostile/` (made by `hostile.py`) is refused with its own error before
/// libheif reads a byte, and sound containers — the composed 2×2 grid and every sample file —
/// decode as before. Run again under AddressSanitizer by scripts/test.sh.
@Suite("HEIF hostile input")
struct HEIFHostileInputTests {
    struct Refusal: Sendable, CustomTestStringConvertible {
        var file: String
        var error: ImageCodecError
        var testDescription: String { file }
    }

    static let refusals = [
        // Without the walker: signal 11 in libheif (and heif-info).
        Refusal(file: "grid-cycle.heic", error: .corruptData("HEIF: item references form a cycle")),
        Refusal(file: "grid-cycle.avif", error: .corruptData("HEIF: item references form a cycle")),
        Refusal(
            file: "grid-of-grids.heic",
            error: .limitExceeded("HEIF: the derived image 1 is built from item 2, which is not a coded image (no grid of grids)")),
        Refusal(file: "reference-chain.heic", error: .limitExceeded("HEIF: a chain of item references deeper than 4")),
        Refusal(file: "many-items.heic", error: .limitExceeded("HEIF: 2101 items, more than 2048")),
        Refusal(file: "many-tiles.heic", error: .limitExceeded("HEIF: a grid of 1056 tiles, more than 1024")),
        Refusal(file: "overlay-layers.heic", error: .limitExceeded("HEIF: an overlay of 65 layers, more than 64")),
        Refusal(file: "extent-past-end.heic", error: .truncatedData),
        Refusal(file: "extent-overflow.heic", error: .corruptData("HEIF: item 1's extent offset overflows")),
        // 1,024 tiles of one 20,000-byte extent (and the grid's 8-byte descriptor): 20 MB for
        // libheif to read and decode from 22 KB.
        Refusal(
            file: "read-amplification.heic",
            error: .limitExceeded("HEIF: the image's items make the library read 20480008 bytes of a 22485-byte file, more than 16777216")),
        Refusal(file: "deep-boxes.heic", error: .limitExceeded("HEIF: boxes nested more than 8 deep")),
        // Without the walker: a 4096² decode planned as 64×64.
        Refusal(file: "lying-ispe.heic", error: .limitExceeded("HEIF: item 1 is coded at 4096×4096, its 'ispe' declares 64×64")),
        Refusal(file: "lying-ispe.avif", error: .limitExceeded("HEIF: item 1 is coded at 4096×4096, its 'ispe' declares 64×64"))
    ]

    @Test("each hostile construction is refused with its own error, by the header read and by a decode", arguments: refusals)
    func refused(_ refusal: Refusal) throws {
        let data = try HEIFFixtures.data("hostile/\(refusal.file)")
        #expect(throws: refusal.error) { try ImageSource(data: data) }
        #expect(throws: refusal.error) { try ImageDecoder(options: DecodingOptions(maxPixelSize: 64)).decode(data) }
        #expect(throws: refusal.error) { try ImageDecoder.header(of: data) }
        #expect(!refusal.error.description.contains("\n"))
    }

    @Test("a primary item that is neither HEVC, AV1 nor derived from them is refused (a heif-container finding)")
    func primaryOfAnotherKind() throws {
        let finding = FuzzInputs.root.appendingPathComponent("Tests/Fixtures/fuzz-regressions/heif-container/primary-not-an-image")
        let data = try Data(contentsOf: finding)
        #expect(throws: ImageCodecError.unsupportedFormat(.heifVariant("item 1 is coded as 'av00', not HEVC or AV1"))) {
            try ImageSource(data: data)
        }
    }

    @Test("a sound 2×2 grid of four tiles decodes as heif-convert decodes it")
    func soundGrid() throws {
        let data = try HEIFFixtures.data("hostile/grid-2x2.heic")
        let source = try ImageSource(data: data)
        #expect((source.header.width, source.header.height) == (192, 120))
        guard case .heif(let layout) = source.layout else {
            Issue.record("not read as HEIF")
            return
        }
        #expect(layout.codedImages == 4 && layout.largestCodedPixels == 96 * 64)
        let options = DecodingOptions(colorManagement: .preserveSource)
        let bitmap = try source.decode(options).bitmap
        let reference = try ImageDecoder(options: options).decode(try HEIFFixtures.heifConvert("hostile/grid-2x2.heic"))
        // libheif pastes the tiles' planes into one canvas; the engine converts it (heif-convert
        // repeats chroma where the engine interpolates: apart by about a level on average at
        // this size, where colour edges are many).
        #expect((bitmap.width, bitmap.height) == (192, 120) && TestImages.meanDifference(bitmap, reference) < 1.5)
        // Each tile is small.heic's picture: the bottom-right quadrant holds its rows 0-55 (the
        // first two rows' chroma blends with the tile above, as a continuous picture's must).
        let tile = try ImageDecoder(options: options).decode(try HEIFFixtures.data("small.heic"))
        var worst = 0
        for y in 2..<50 {
            for x in 4..<90 {
                for channel in 0..<3 {
                    let grid = Int(bitmap.pixels[((64 + y) * 192 + 96 + x) * 3 + channel])
                    worst = max(worst, abs(grid - Int(tile.pixels[(y * 96 + x) * 3 + channel])))
                }
            }
        }
        #expect(worst <= 2, "the bottom-right tile differs from small.heic by \(worst)")
    }

    @Test("items may share bytes: a grid whose tiles all point at one tile, and 500 thumbnails at the primary's bytes, decode")
    func sharedBytes() throws {
        let options = DecodingOptions(colorManagement: .preserveSource)
        let shared = try ImageDecoder(options: options).decode(try HEIFFixtures.data("hostile/extent-overlap.heic"))
        let separate = try ImageDecoder(options: options).decode(try HEIFFixtures.data("hostile/grid-2x2.heic"))
        #expect((shared.width, shared.height) == (192, 120) && TestImages.maxDifference(shared, separate) == 0)
        let primary = try ImageDecoder(options: options).decode(try HEIFFixtures.data("hostile/shared-thumbnails.heic"))
        let reference = try ImageDecoder(options: options).decode(try HEIFFixtures.heifConvert("hostile/shared-thumbnails.heic"))
        try #require((primary.width, primary.height) == (reference.width, reference.height))
        #expect(TestImages.meanDifference(primary, reference) < 1.5)
    }

    @Test("a colour profile over maxICCProfileBytes is refused before libheif copies it; within the limit it is read from the file")
    func profileCap() throws {
        let data = try HEIFFixtures.data("hostile/icc-8k.heic")
        var limits = DecodingLimits()
        limits.maxICCProfileBytes = 4096
        #expect(throws: ImageCodecError.limitExceeded("HEIF: a 'colr' property of 8196 bytes, more than 4100")) {
            try ImageSource(data: data, limits: limits)
        }
        let source = try ImageSource(data: data)
        guard case .heif(let layout) = source.layout, let range = layout.iccProfile else {
            Issue.record("the profile was not found")
            return
        }
        #expect(range.count == 8192 && Array(data[range].prefix(4)) == [0, 1, 2, 3])
        // Not a real profile: colour management says so and decodes as sRGB.
        let decoded = try source.decode(DecodingOptions())
        #expect((decoded.bitmap.width, decoded.bitmap.height) == (96, 64))
    }

    @Test(
        "every sample HEIC and AVIF passes the walk, which counts what libheif decodes",
        arguments: [
            ("kite.heic", 1), ("kite.avif", 1), ("kite-10bit.heic", 1), ("kite-10bit.avif", 1), ("kite-p3.heic", 1),
            ("kite-p3-nclx.avif", 1), ("calla-alpha.heic", 2), ("calla-alpha.avif", 2), ("calla-premultiplied.heic", 2),
            ("small.heic", 1), ("small-irot-1.heic", 1), ("pq-bands.avif", 1)
        ])
    func samples(_ name: String, _ codedImages: Int) throws {
        let data = try HEIFFixtures.data(name)
        let container = try data.withUnsafeBytes { (bytes) throws(ImageCodecError) in try HEIFContainer(bytes, limits: DecodingLimits()) }
        #expect(container.codedImages == codedImages)
        let header = try ImageDecoder.header(of: data)
        #expect(max(header.width, header.height) == max(container.declaredWidth, container.declaredHeight))
    }

    @Test("library messages reach users as one line")
    func oneLine() {
        let message = Array("libheif read: Security limit exceeded\n  (2101 items)\r\u{7}".utf8CString)
        #expect(message.shimMessage == "libheif read: Security limit exceeded (2101 items)")
        #expect("\u{1b}[31mred\u{85}\ttext ".singleLine == "[31mred text")
    }
}
