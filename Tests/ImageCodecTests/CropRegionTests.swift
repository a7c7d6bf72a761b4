import Foundation
import Testing
@testable import ImageCodec

/// `DecodingOptions.region` (imgproxy's `crop`): the part kept before the resize, cropped while
/// decoding, and the resize applied to it as if it were the image.
@Suite("Resize: crop regions")
struct CropRegionTests {
    static func decode(_ data: Data, _ region: CropRegion, _ resize: Resize? = nil) throws -> Bitmap {
        var options = DecodingOptions(resize: resize)
        options.region = region
        return try ImageDecoder(options: options).decode(data)
    }

    @Test("a region without a resize is the source's pixels there, exactly (PNG)")
    func exactPixels() throws {
        let source = TestImages.make(width: 61, height: 37, format: .rgb) { x, y in [UInt8(x * 4), UInt8(y * 6), UInt8((x + y) % 256)] }
        let data = try ImageEncoder.png(source)
        let cases: [(CropRegion, x: Int, y: Int, width: Int, height: Int)] = [
            (CropRegion(width: .pixels(20), height: .pixels(10), gravity: .northWest), 0, 0, 20, 10),
            (CropRegion(width: .pixels(20), height: .pixels(10), gravity: .southEast), 41, 27, 20, 10),
            (CropRegion(width: .fraction(0.5), height: .whole, gravity: .east), 30, 0, 31, 37),
            (CropRegion(width: .pixels(500), height: .fraction(0.1), gravity: .north), 0, 0, 61, 4),
            (CropRegion(width: .pixels(11), height: .pixels(9), gravity: .focus(x: 0.5, y: 0.5)), 25, 14, 11, 9)
        ]
        for (region, x, y, width, height) in cases {
            let result = try Self.decode(data, region)
            #expect((result.width, result.height) == (width, height), "\(region)")
            guard (result.width, result.height) == (width, height) else { continue }
            for row in 0..<height {
                for column in 0..<width {
                    #expect(result.pixel(x: column, y: row) == source.pixel(x: x + column, y: y + row), "\(region) at (\(column), \(row))")
                }
            }
        }
    }

    @Test("the resize sees the region as the image: a fill's gravity picks inside it", arguments: [false, true])
    func resizeInsideTheRegion(png: Bool) throws {
        let bands = CropDecodingTests.bands(width: 600, height: 200, vertical: false)
        let data = png ? try ImageEncoder.png(bands) : try TestImages.faithfulJPEG(bands)
        // The left half: red and half of green. A square fill of it keeps its east: green.
        let west = CropRegion(width: .fraction(0.5), height: .whole, gravity: .west)
        let east = try Self.decode(data, west, .fill(width: 100, height: 100, gravity: .east))
        #expect((east.width, east.height) == (100, 100))
        #expect(CropDecodingTests.near(east.pixel(x: 80, y: 50), CropDecodingTests.green), "\(Array(east.pixel(x: 80, y: 50)))")
        #expect(CropDecodingTests.near(east.pixel(x: 5, y: 50), CropDecodingTests.red), "\(Array(east.pixel(x: 5, y: 50)))")
        // A fit of the right third is all blue, at the third's aspect.
        let fit = try Self.decode(data, CropRegion(width: .pixels(200), height: .whole, gravity: .east), .fit(width: 50, height: 50))
        #expect((fit.width, fit.height) == (50, 50))
        #expect(CropDecodingTests.near(fit.pixel(x: 25, y: 25), CropDecodingTests.blue))
    }

    @Test("the region is in the upright image: an EXIF-rotated JPEG's north is what the viewer sees on top")
    func uprightRegion() throws {
        // Stored 200 wide, 600 tall, red on top; orientation 6 (turn right) shows it 600×200 with red on the right.
        let stored = CropDecodingTests.bands(width: 200, height: 600, vertical: true)
        let data = TestImages.withOrientation(try TestImages.faithfulJPEG(stored), 6)
        let result = try Self.decode(data, CropRegion(width: .pixels(150), height: .whole, gravity: .east))
        #expect((result.width, result.height) == (150, 200))
        #expect(CropDecodingTests.near(result.pixel(x: 75, y: 100), CropDecodingTests.red), "\(Array(result.pixel(x: 75, y: 100)))")
    }

    @Test("a side read as imgproxy writes it: 0 whole, below 1 a fraction, pixels from 1; out-of-range numbers are refused, never a trap")
    func lengthFromNumber() {
        #expect(CropRegion.Length(0) == .whole && CropRegion.Length(0.25) == .fraction(0.25) && CropRegion.Length(640.7) == .pixels(640))
        for number in [1e20, .infinity, -3, .nan, -.infinity] {
            #expect(throws: ImageCodecError.self, "\(number)") { try CropRegion(width: CropRegion.Length(number), height: .whole).validate() }
        }
    }

    @Test("sides outside the rules are refused before decoding")
    func refused() throws {
        let data = try ImageEncoder.png(CropDecodingTests.bands(width: 60, height: 20, vertical: false))
        for region in [
            CropRegion(width: .fraction(1.5), height: .whole), CropRegion(width: .pixels(0), height: .whole),
            CropRegion(width: .whole, height: .fraction(.nan)), CropRegion(width: .pixels(2_000_000), height: .whole)
        ] {
            #expect(throws: ImageCodecError.self, "\(region)") { try Self.decode(data, region) }
        }
    }
}
