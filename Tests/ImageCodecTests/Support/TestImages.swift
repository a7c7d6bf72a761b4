import Foundation
import ImageCodec

/// Generated images with known content, and helpers to locate fixtures.
enum TestImages {
    /// A bitmap whose pixel (x, y) is `color(x, y)`.
    static func make(width: Int, height: Int, format: PixelFormat, _ color: (Int, Int) -> [UInt8]) -> Bitmap {
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height * format.channels)
        for y in 0..<height {
            for x in 0..<width {
                let value = color(x, y)
                precondition(value.count == format.channels)
                pixels.append(contentsOf: value)
            }
        }
        return try! Bitmap(width: width, height: height, format: format, pixels: pixels)
    }

    /// Four flat quadrants: red top-left, green top-right, blue bottom-left, white bottom-right.
    static func quadrants(width: Int, height: Int) -> Bitmap {
        make(width: width, height: height, format: .rgb) { x, y in
            switch (x < width / 2, y < height / 2) {
            case (true, true): [255, 0, 0]
            case (false, true): [0, 255, 0]
            case (true, false): [0, 0, 255]
            case (false, false): [255, 255, 255]
            }
        }
    }

    static let sampleDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("SampleImages")

    static func sample(_ name: String) throws -> Data {
        try Data(contentsOf: sampleDirectory.appendingPathComponent(name))
    }

    /// A JPEG of `bitmap` at high quality with full-resolution chroma, for pixel comparisons.
    static func faithfulJPEG(_ bitmap: Bitmap, progressive: Bool = false) throws -> Data {
        try ImageEncoder.jpeg(bitmap, options: JPEGEncodingOptions(quality: 100, chromaSubsampling: .s444, progressive: progressive))
    }

    /// Inserts an APP1 EXIF segment holding only an orientation tag right after SOI.
    static func withOrientation(_ jpeg: Data, _ orientation: Int, bigEndian: Bool = false) -> Data {
        func u16(_ v: Int) -> [UInt8] { bigEndian ? [UInt8(v >> 8), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func u32(_ v: Int) -> [UInt8] {
            bigEndian ? [0, 0, UInt8(v >> 8), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8), 0, 0]
        }
        var tiff: [UInt8] = bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]
        tiff += u16(42) + u32(8) // header, IFD0 at offset 8
        tiff += u16(1) // one entry
        tiff += u16(0x0112) + u16(3) + u32(1) // Orientation, SHORT, count 1
        tiff += u16(orientation) + [0, 0] // value, padded to 4 bytes
        tiff += u32(0) // no next IFD
        let payload: [UInt8] = Array("Exif".utf8) + [0, 0] + tiff
        let length = payload.count + 2
        let segment: [UInt8] = [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        var bytes = [UInt8](jpeg)
        bytes.insert(contentsOf: segment, at: 2)
        return Data(bytes)
    }

    /// The `width × height` pixels at (`x`, `y`), copied: the exact crop a reference is made of.
    static func cropped(_ bitmap: Bitmap, x: Int, y: Int, width: Int, height: Int) -> Bitmap {
        precondition(x >= 0 && y >= 0 && x + width <= bitmap.width && y + height <= bitmap.height)
        let channels = bitmap.format.channels
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height * channels)
        for row in y..<(y + height) {
            let start = (row * bitmap.width + x) * channels
            pixels += bitmap.pixels[start..<(start + width * channels)]
        }
        return try! Bitmap(width: width, height: height, format: bitmap.format, pixels: pixels)
    }

    /// A photo-like test picture: smooth gradients under a fine texture, so resampling has
    /// detail to get right or wrong, and no two neighbourhoods alike.
    static func texture(width: Int, height: Int, format: PixelFormat = .rgb) -> Bitmap {
        make(width: width, height: height, format: format) { x, y in
            let fx = Double(x), fy = Double(y)
            let a = 128 + 60 * sin(fx / 7.3) * cos(fy / 5.1) + 40 * sin((fx + 2 * fy) / 31)
            let b = 128 + 80 * sin(fx / 53 + fy / 41)
            let c = 128 + 70 * cos(fx / 13.7 - fy / 23.9)
            let channels = [a, b, c].map { UInt8(max(0, min(255, $0.rounded()))) }
            switch format {
            case .gray: return [channels[0]]
            case .grayAlpha: return [channels[0], UInt8((x * 255) / max(1, width - 1))]
            case .rgb: return channels
            case .rgba: return channels + [UInt8(255 - (y * 200) / max(1, height - 1))]
            }
        }
    }

    /// Largest absolute per-channel difference between two equally sized bitmaps.
    static func maxDifference(_ a: Bitmap, _ b: Bitmap) -> Int {
        precondition(a.width == b.width && a.height == b.height && a.format == b.format)
        return zip(a.pixels, b.pixels).map { abs(Int($0) - Int($1)) }.max() ?? 0
    }

    static func meanDifference(_ a: Bitmap, _ b: Bitmap) -> Double {
        precondition(a.width == b.width && a.height == b.height && a.format == b.format)
        let total = zip(a.pixels, b.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
        return Double(total) / Double(a.pixels.count)
    }
}
