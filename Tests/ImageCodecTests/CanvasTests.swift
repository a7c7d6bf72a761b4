import Foundation
import Testing
import TestSupport

@testable import ImageCodec

/// The canvas around a resized image: sizes, where the image sits, and the colour of every
/// added pixel, read back from the bitmap.
@Suite("Canvas: extend, padding, background")
struct CanvasTests {
    /// `width` × `height` RGB, every pixel (10, 200, 30).
    static func green(_ width: Int, _ height: Int) throws -> Bitmap {
        try Bitmap(width: width, height: height, format: .rgb, pixels: [UInt8]((0..<(width * height)).flatMap { _ in [10, 200, 30] }))
    }

    static func rgb(_ bitmap: Bitmap, _ x: Int, _ y: Int) -> [UInt8] { Array(bitmap.pixel(x: x, y: y)) }

    @Test("a 4:3 fit extended to its square box: the box's size, white above and below, the photo centred")
    func extendToBox() throws {
        let tile = try Canvas(extend: .size(width: 100, height: 100), background: .white).apply(to: Self.green(100, 75))
        #expect(tile.width == 100 && tile.height == 100 && tile.format == .rgb)
        for (x, y) in [(0, 0), (99, 0), (0, 99), (99, 99), (50, 11), (50, 88)] { #expect(Self.rgb(tile, x, y) == [255, 255, 255], "(\(x), \(y))") }
        // (100 - 75) / 2 = 12.5: rows 13...87 hold the photo (rounded to even: 12 or 13 above).
        for (x, y) in [(0, 13), (99, 87), (50, 50)] { #expect(Self.rgb(tile, x, y) == [10, 200, 30], "(\(x), \(y))") }
        let photoRows = (0..<100).filter { Self.rgb(tile, 50, $0) == [10, 200, 30] }
        #expect(photoRows.count == 75 && abs(photoRows[0] - (99 - photoRows[74])) <= 1, "centred: \(photoRows.first!)...\(photoRows.last!)")
    }

    @Test("gravity places the image: north keeps it at the top, south-east in the corner")
    func gravityPlaces() throws {
        let north = try Canvas(extend: .size(width: 40, height: 40), gravity: .north, background: .white).apply(to: Self.green(20, 10))
        #expect(Self.rgb(north, 20, 0) == [10, 200, 30] && Self.rgb(north, 20, 10) == [255, 255, 255] && Self.rgb(north, 9, 0) == [255, 255, 255])
        let corner = try Canvas(extend: .size(width: 40, height: 40), gravity: .southEast, background: .white).apply(to: Self.green(20, 10))
        #expect(Self.rgb(corner, 39, 39) == [10, 200, 30] && Self.rgb(corner, 20, 30) == [10, 200, 30] && Self.rgb(corner, 19, 39) == [255, 255, 255])
    }

    @Test("padding adds its sides in the background colour; a larger image is never cut by extend")
    func padding() throws {
        let red = RGBColor(red: 255, green: 0, blue: 0)
        let padded = try Canvas(extend: .size(width: 10, height: 10), padding: Canvas.Insets(top: 1, right: 2, bottom: 3, left: 4), background: red)
            .apply(to: Self.green(30, 20))
        #expect(padded.width == 36 && padded.height == 24)
        #expect(Self.rgb(padded, 3, 5) == [255, 0, 0] && Self.rgb(padded, 4, 1) == [10, 200, 30] && Self.rgb(padded, 33, 20) == [10, 200, 30])
        #expect(Self.rgb(padded, 34, 20) == [255, 0, 0] && Self.rgb(padded, 10, 0) == [255, 0, 0] && Self.rgb(padded, 10, 21) == [255, 0, 0])
    }

    @Test("an aspect ratio grows the short side only: 120×80 at 1:1 is 120×120, at 16:9 is 142×80")
    func aspectRatio() throws {
        let square = try Canvas(extend: .aspectRatio(width: 1, height: 1), background: .white).apply(to: Self.green(120, 80))
        #expect(square.width == 120 && square.height == 120)
        let wide = try Canvas(extend: .aspectRatio(width: 16, height: 9), background: .white).apply(to: Self.green(120, 80))
        #expect(wide.width == 142 && wide.height == 80)
    }

    @Test("without a background the added area is transparent and the image opaque")
    func transparent() throws {
        let tile = try Canvas(extend: .size(width: 30, height: 30)).apply(to: Self.green(30, 10))
        #expect(tile.format == .rgba && tile.width == 30 && tile.height == 30)
        #expect(Array(tile.pixel(x: 0, y: 0)) == [0, 0, 0, 0] && Array(tile.pixel(x: 15, y: 15)) == [10, 200, 30, 255])
        // Written as JPEG, the transparent area takes the encoder's background (white).
        let back = try ImageDecoder().decode(ImageEncoder.jpeg(tile, options: JPEGEncodingOptions(quality: 95)))
        #expect(back.pixel(x: 1, y: 1).allSatisfy { $0 >= 250 })
    }

    @Test("a background flattens alpha under it; gray stays gray on gray and turns RGB on colour")
    func flattenAndGray() throws {
        let halfAlpha = try Bitmap(width: 2, height: 2, format: .rgba, pixels: [UInt8]((0..<4).flatMap { _ in [0, 0, 0, 128] }))
        let opaque = try Canvas(padding: .all(1), background: .white).apply(to: halfAlpha)
        #expect(opaque.format == .rgb && Self.rgb(opaque, 1, 1) == [127, 127, 127] && Self.rgb(opaque, 0, 0) == [255, 255, 255])
        let gray = try Bitmap(width: 2, height: 2, format: .gray, pixels: [50, 50, 50, 50])
        let onGray = try Canvas(padding: .all(1), background: RGBColor(red: 9, green: 9, blue: 9)).apply(to: gray)
        #expect(onGray.format == .gray && onGray.pixels[0] == 9 && Array(onGray.pixel(x: 1, y: 1)) == [50])
        let onRed = try Canvas(padding: .all(1), background: RGBColor(red: 200, green: 0, blue: 0)).apply(to: gray)
        #expect(onRed.format == .rgb && Self.rgb(onRed, 0, 0) == [200, 0, 0] && Self.rgb(onRed, 2, 2) == [50, 50, 50])
    }

    @Test("a giant canvas is refused before any allocation: a side past 65535, an area past the pixel limit")
    func giantCanvas() throws {
        #expect(throws: ImageCodecError.dimensionTooLarge(width: 65_546, height: 20, limit: 65_535)) {
            try Canvas(padding: Canvas.Insets(top: 0, right: 65_535, bottom: 0, left: 1)).size(width: 10, height: 20)
        }
        let limits = DecodingLimits()
        #expect(throws: ImageCodecError.tooLarge(width: 60_000, height: 60_000, limit: limits.maxPixelCount)) {
            try Canvas(extend: .size(width: 60_000, height: 60_000)).apply(to: Self.green(2, 2))
        }
        #expect(try Canvas().apply(to: Self.green(3, 2)) == Self.green(3, 2), "the identity canvas returns the bitmap")
    }

    @Test("a finishing turns, filters and extends in that order; its size and bytes are known before it runs")
    func finishing() throws {
        // 60 × 20: the left half green, the right half red.
        let photo = try Bitmap(
            width: 60, height: 20, format: .rgb,
            pixels: (0..<20).flatMap { _ in (0..<60).flatMap { $0 < 30 ? [10, 200, 30] : [220, 20, 20] as [UInt8] } })
        let finishing = Finishing(
            rotation: 90, filters: ImageFilters(pixelate: 2), canvas: Canvas(extend: .size(width: 40, height: 80), background: .white))
        #expect(try finishing.outputSize(width: 60, height: 20) == (40, 80))
        // The turned copy (60 × 20 × 4), the filters' buffers (20 × 60 × 4 × 6) and the canvas (40 × 80 × 4).
        #expect(try finishing.plannedBytes(width: 60, height: 20) == 4_800 + 28_800 + 12_800)
        let tile = try finishing.apply(to: photo)
        #expect(tile.width == 40 && tile.height == 80)
        // Turned clockwise, the green left half is on top: rows 10...39 of the centred 20 × 60.
        #expect(Self.rgb(tile, 20, 15) == [10, 200, 30] && Self.rgb(tile, 20, 60) == [220, 20, 20])
        #expect(Self.rgb(tile, 2, 40) == [255, 255, 255] && Self.rgb(tile, 20, 5) == [255, 255, 255])
        #expect(tile == (try finishing.canvas.apply(to: finishing.filters.apply(to: photo.applying(.right)))))
        #expect(try Finishing().apply(to: photo) == photo && Finishing().plannedBytes(width: 60, height: 20) == 0)
    }
}
