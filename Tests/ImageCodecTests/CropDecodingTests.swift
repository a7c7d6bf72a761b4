import CTestImageWriter
import Foundation
import Testing
@testable import ImageCodec

/// Resizes through the decoders: gravity keeps the band it names, orientation comes first,
/// and cropping while decoding gives the pixels of a full decode + exact crop + Lanczos.
@Suite("Resize: decoding with crops")
struct CropDecodingTests {
    static let red: [UInt8] = [255, 0, 0], green: [UInt8] = [0, 255, 0], blue: [UInt8] = [0, 0, 255]

    /// Three flat bands across the width (`vertical`: down the height), red, green, blue.
    static func bands(width: Int, height: Int, vertical: Bool) -> Bitmap {
        TestImages.make(width: width, height: height, format: .rgb) { x, y in
            let third = vertical ? y * 3 / height : x * 3 / width
            return [red, green, blue][third]
        }
    }

    static func near(_ pixel: ArraySlice<UInt8>, _ colour: [UInt8], tolerance: Int = 6) -> Bool {
        Array(pixel).elementsEqual(colour, by: { abs(Int($0) - Int($1)) <= tolerance })
    }

    static func decode(_ data: Data, _ resize: Resize) throws -> Bitmap {
        try ImageDecoder(options: DecodingOptions(resize: resize)).decode(data)
    }

    @Test("each compass point and focus point keeps the band it names", arguments: [false, true])
    func gravityKeepsItsBand(png: Bool) throws {
        let landscape = Self.bands(width: 600, height: 200, vertical: false)
        let portrait = Self.bands(width: 200, height: 600, vertical: true)
        let encode: (Bitmap) throws -> Data = { png ? try ImageEncoder.png($0) : try TestImages.faithfulJPEG($0) }
        let (wide, tall) = (try encode(landscape), try encode(portrait))
        let horizontal: [(Gravity, [UInt8])] = [
            (.west, Self.red), (.northWest, Self.red), (.southWest, Self.red), (.centre, Self.green), (.north, Self.green),
            (.south, Self.green), (.east, Self.blue), (.northEast, Self.blue), (.southEast, Self.blue),
            (.focus(x: 0.05, y: 0.5), Self.red), (.focus(x: 0.5, y: 0.9), Self.green), (.focus(x: 0.84, y: 0), Self.blue)
        ]
        for (gravity, colour) in horizontal {
            let cell = try Self.decode(wide, .fill(width: 100, height: 100, gravity: gravity))
            #expect(cell.width == 100 && cell.height == 100)
            for (x, y) in [(2, 2), (50, 50), (97, 97)] {
                #expect(Self.near(cell.pixel(x: x, y: y), colour), "\(gravity) at (\(x), \(y)): \(Array(cell.pixel(x: x, y: y)))")
            }
        }
        let vertical: [(Gravity, [UInt8])] = [
            (.north, Self.red), (.northEast, Self.red), (.northWest, Self.red), (.centre, Self.green), (.east, Self.green),
            (.west, Self.green), (.south, Self.blue), (.southEast, Self.blue), (.southWest, Self.blue), (.focus(x: 0.9, y: 0.1), Self.red)
        ]
        for (gravity, colour) in vertical {
            let cell = try Self.decode(tall, .fill(width: 100, height: 100, gravity: gravity))
            #expect(Self.near(cell.pixel(x: 50, y: 3), colour) && Self.near(cell.pixel(x: 50, y: 96), colour), "\(gravity)")
        }
        // A focus point between two bands: centred on x = 210 of 600, the crop spans 110..<310,
        // red up to 200 and green after it, so the cell's left 45% is red and the rest green.
        let split = try Self.decode(wide, .fill(width: 200, height: 200, gravity: .focus(x: 0.35, y: 0.5)))
        #expect(Self.near(split.pixel(x: 80, y: 100), Self.red) && Self.near(split.pixel(x: 100, y: 100), Self.green))
    }

    @Test("sizes and gravity refer to the upright image for all eight EXIF orientations", arguments: 1...8)
    func orientationFirst(_ value: Int) throws {
        let orientation = try #require(ExifOrientation(rawValue: value))
        // Stored so that the orientation turns it back into the upright picture.
        let inverse: ExifOrientation =
            switch orientation {
            case .right: .left;
            case .left: .right;
            default: orientation
            }
        for upright in [Self.bands(width: 160, height: 480, vertical: true), Self.bands(width: 480, height: 160, vertical: false)] {
            let stored = try upright.applying(inverse)
            let jpeg = TestImages.withOrientation(try TestImages.faithfulJPEG(stored), value)
            let tall = upright.height > upright.width
            let cases: [(Gravity, [UInt8])] =
                tall
                ? [(.north, Self.red), (.south, Self.blue), (.focus(x: 0.5, y: 0.08), Self.red), (.focus(x: 0.1, y: 0.92), Self.blue)]
                : [(.west, Self.red), (.east, Self.blue), (.focus(x: 0.08, y: 0.5), Self.red), (.focus(x: 0.92, y: 0.1), Self.blue)]
            for (gravity, colour) in cases {
                let cell = try Self.decode(jpeg, .fill(width: 80, height: 80, gravity: gravity))
                #expect(cell.width == 80 && cell.height == 80)
                #expect(
                    Self.near(cell.pixel(x: 40, y: 40), colour) && Self.near(cell.pixel(x: 3, y: 76), colour),
                    "orientation \(value) \(tall ? "portrait" : "landscape") \(gravity): \(Array(cell.pixel(x: 40, y: 40)))")
            }
            // A box of the upright shape is upright: 1:3 stays 1:3 whatever the stored shape.
            let fitted = try Self.decode(jpeg, .fit(width: 90, height: 90))
            #expect((fitted.width, fitted.height) == (tall ? (30, 90) : (90, 30)), "orientation \(value)")
            let forced = try Self.decode(jpeg, .force(width: 40, height: 20))
            #expect((forced.width, forced.height) == (40, 20), "orientation \(value)")
        }
    }

    // MARK: - Crop while decoding against full decode + exact crop + Lanczos

    struct Source: CustomStringConvertible, Sendable {
        let name: String
        let data: @Sendable () throws -> Data
        var description: String { name }
    }

    static let width = 244, height = 180
    /// Made once: building textures pixel by pixel is most of the cost of a debug test run.
    static let texture = TestImages.texture(width: width, height: height)

    static let sources: [Source] = [
        Source(name: "baseline JPEG 4:2:0") {
            try ImageEncoder.jpeg(texture, options: JPEGEncodingOptions(quality: 95, chromaSubsampling: .s420))
        },
        Source(name: "baseline JPEG 4:4:4") { try TestImages.faithfulJPEG(texture) },
        Source(name: "progressive JPEG 4:2:0") {
            try ImageEncoder.jpeg(texture, options: JPEGEncodingOptions(quality: 95, chromaSubsampling: .s420, progressive: true))
        },
        Source(name: "grayscale JPEG") { try TestImages.faithfulJPEG(TestImages.texture(width: width, height: height, format: .gray)) },
        Source(name: "CMYK JPEG") { try cmykJPEG() },
        Source(name: "Adam7 PNG") { try png(bitDepth: 8, colorType: 2, interlaced: true) },
        Source(name: "16-bit PNG") { try png(bitDepth: 16, colorType: 2, interlaced: false) },
        Source(name: "RGBA PNG") { try ImageEncoder.png(TestImages.texture(width: width, height: height, format: .rgba)) }
    ]

    /// Fill boxes on the 244×180 sources whose crops start on an iMCU boundary (x = 32, 64 of
    /// 16-pixel iMCUs), mid-iMCU (x = 2; y = 58 from a focus point), and at the image's edge,
    /// all at the full DCT size: the same pixels go into the same filter.
    static let crops: [Resize] = [
        .fill(width: 120, height: 120), .fill(width: 120, height: 120, gravity: .east), .fill(width: 160, height: 120),
        .fill(width: 200, height: 100, gravity: .focus(x: 0.3, y: 0.7)), .fill(width: 120, height: 120, gravity: .west)
    ]

    @Test("crop while decoding gives the pixels of a full decode + exact crop + Lanczos", arguments: sources)
    func cropMatchesReference(_ source: Source) throws {
        let data = try source.data()
        let full = try ImageDecoder().decode(data)
        for resize in Self.crops {
            let (decoded, reference) = try Self.decodeWithReference(data, full: full, resize)
            #expect(try ImageDecoder(options: DecodingOptions(resize: resize)).plan(data).scaleNumerator == 8)
            #expect(TestImages.maxDifference(decoded, reference) <= 1, "\(source) \(resize)")
        }
    }

    @Test(
        "at a reduced DCT scale, crops of real photos stay as close to the reference as fits are",
        arguments: [
            ("Kite.jpg", Resize.fill(width: 400, height: 400, gravity: .east)), // baseline 4:2:0, 2/8
            ("Autumn.jpg", Resize.fill(width: 300, height: 500, gravity: .focus(x: 0.7, y: 0.2))), // progressive, 4/8
            ("Grey.jpg", Resize.fill(width: 200, height: 200, gravity: .southWest)) // grayscale, 2/8
        ])
    func scaledCropsOfPhotos(name: String, resize: Resize) throws {
        let data = try TestImages.sample(name)
        let (decoded, reference) = try Self.decodeWithReference(data, full: ImageDecoder().decode(data), resize)
        #expect(try ImageDecoder(options: DecodingOptions(resize: resize)).plan(data).scaleNumerator < 8)
        // The fit path's own bound against the same reference (JPEGDecodingTests).
        #expect(TestImages.meanDifference(decoded, reference) < 2, "\(name) \(resize)")
    }

    /// The decode of `data` at `resize`, and the reference: `full` cropped exactly (whole
    /// pixels) and resampled with Lanczos.
    static func decodeWithReference(_ data: Data, full: Bitmap, _ resize: Resize) throws -> (decoded: Bitmap, reference: Bitmap) {
        let plan = ResizePlan(resize, sourceWidth: full.width, sourceHeight: full.height)
        let crop = plan.crop
        #expect(
            crop.x == crop.x.rounded() && crop.y == crop.y.rounded() && crop.width == crop.width.rounded()
                && crop.height == crop.height.rounded(), "whole-pixel crops only here: \(crop)")
        let reference = try TestImages.cropped(full, x: Int(crop.x), y: Int(crop.y), width: Int(crop.width), height: Int(crop.height))
            .resampled(width: plan.width, height: plan.height)
        let decoded = try decode(data, resize)
        #expect(decoded.width == plan.width && decoded.height == plan.height && decoded.format == reference.format)
        return (decoded, reference)
    }

    @Test("a fractional crop is honoured, not rounded: an odd margin splits into two half pixels")
    func subpixelOffset() throws {
        // Mirror-symmetric about its vertical centre line, 401 wide: the centre crop of 300
        // starts at 50.5, so the result is symmetric too; starting at 50 or 51 would not be.
        let source = TestImages.make(width: 401, height: 300, format: .gray) { x, y in
            let d = abs(x - 200)
            return [UInt8((d * 37 + (d * d) % 53 + y) % 256)]
        }
        // PNG is lossless; the JPEG (q100, at the full DCT size for 250 px) carries a level or
        // two of compression error that its left-aligned blocks do not spread symmetrically.
        for (data, size, tolerance) in [(try ImageEncoder.png(source), 150, 1), (try TestImages.faithfulJPEG(source), 250, 3)] {
            let cell = try Self.decode(data, .fill(width: size, height: size))
            var asymmetry = 0
            for y in 0..<size {
                for x in 0..<(size / 2) {
                    asymmetry = max(asymmetry, abs(Int(cell.pixel(x: x, y: y).first!) - Int(cell.pixel(x: size - 1 - x, y: y).first!)))
                }
            }
            #expect(asymmetry <= tolerance, "\(size) px: largest left-right difference \(asymmetry)")
        }
    }

    @Test("small sources: fill cuts only what exceeds the box, fill-down crops to the box's aspect, enlarge scales up")
    func smallSources() throws {
        let source = TestImages.texture(width: 90, height: 60)
        let png = try ImageEncoder.png(source)
        let fill = try Self.decode(png, .fill(width: 80, height: 80))
        #expect((fill.width, fill.height) == (80, 60))
        // Nothing scaled: the middle 80 columns, copied as they are.
        #expect(fill == TestImages.cropped(source, x: 5, y: 0, width: 80, height: 60))
        let down = try Self.decode(png, .fillDown(width: 80, height: 80))
        #expect(down == TestImages.cropped(source, x: 15, y: 0, width: 60, height: 60))
        let enlarged = try Self.decode(png, .fill(width: 120, height: 120, enlarge: true))
        #expect((enlarged.width, enlarged.height) == (120, 120))
        let fitted = try Self.decode(png, .fit(width: 180, height: 180, enlarge: true))
        #expect((fitted.width, fitted.height) == (180, 120))
    }

    @Test("an enlarged output obeys the decoder's limits, before anything is allocated")
    func enlargeWithinLimits() throws {
        let png = try ImageEncoder.png(TestImages.texture(width: 4, height: 2))
        let options = DecodingOptions(resize: .fit(width: 90_000, height: 90_000, enlarge: true))
        #expect(throws: ImageCodecError.tooLarge(width: 90_000, height: 45_000, limit: DecodingLimits().maxPixelCount)) {
            try ImageDecoder(options: options).decode(png)
        }
        #expect(throws: ImageCodecError.self) { try ImageDecoder(options: DecodingOptions(resize: .fill(width: 0, height: 5))).decode(png) }
    }

    // MARK: - Fixtures the engine's own encoder does not write

    static func cmykJPEG() throws -> Data {
        var samples: [UInt8] = []
        for index in 0..<(width * height) {
            let rgb = texture.pixels[(index * 3)..<(index * 3 + 3)]
            // Adobe-inverted CMYK (255 = no ink) of the texture, with no black.
            samples += Array(rgb) + [255]
        }
        var output: UnsafeMutablePointer<UInt8>?
        var length: UInt = 0
        guard test_jpeg_write_cmyk(UInt32(width), UInt32(height), samples, 0, nil, 0, &output, &length) == 0, let output else {
            throw ImageCodecError.encodingFailed("test CMYK writer")
        }
        defer { test_png_free(output) }
        return Data(bytes: output, count: Int(length))
    }

    static func png(bitDepth: Int32, colorType: Int32, interlaced: Bool) throws -> Data {
        let samples: [UInt8] = bitDepth == 16 ? texture.pixels.flatMap { [$0, UInt8(truncatingIfNeeded: Int($0) * 7)] } : texture.pixels
        var output: UnsafeMutablePointer<UInt8>?
        var length = 0
        guard
            test_png_write(
                UInt32(width), UInt32(height), bitDepth, colorType, interlaced ? 1 : 0, samples,
                width * 3 * Int(bitDepth / 8), nil, 0, nil, 0, 0, 0, 0, 0, &output, &length) == 0, let output
        else {
            throw ImageCodecError.encodingFailed("test PNG writer")
        }
        defer { test_png_free(output) }
        return Data(bytes: output, count: length)
    }
}
