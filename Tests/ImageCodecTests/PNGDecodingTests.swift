import CTestImageWriter
import Foundation
import Testing
@testable import ImageCodec

/// One PNG configuration of the conformance matrix.
struct PNGCase: CustomTestStringConvertible, Sendable {
    var colorType: Int32
    var bitDepth: Int
    var interlaced: Bool
    var transparency: Bool

    var testDescription: String {
        "type \(colorType) depth \(bitDepth)\(interlaced ? " Adam7" : "")\(transparency ? " tRNS" : "")"
    }

    static var all: [PNGCase] {
        let depths: [(Int32, [Int])] = [(0, [1, 2, 4, 8, 16]), (2, [8, 16]), (3, [1, 2, 4, 8]), (4, [8, 16]), (6, [8, 16])]
        return depths.flatMap { type, bitDepths in
            bitDepths.flatMap { depth in
                [false, true].flatMap { interlaced in
                    (type == 4 || type == 6 ? [false] : [false, true]).map {
                        PNGCase(colorType: type, bitDepth: depth, interlaced: interlaced, transparency: $0)
                    }
                }
            }
        }
    }
}

@Suite("PNG decoding")
struct PNGDecodingTests {
    static let width = 13, height = 11 // odd sizes exercise Adam7's partial passes

    @Test("every colour type × bit depth × interlace × tRNS decodes to the exact 8-bit pixels", arguments: PNGCase.all)
    func matrix(_ config: PNGCase) throws {
        let channels = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][Int(config.colorType)]!
        let maxValue = config.colorType == 3 ? (1 << config.bitDepth) - 1 : (1 << config.bitDepth) - 1
        func sample(_ x: Int, _ y: Int, _ c: Int) -> Int {
            config.bitDepth == 16 ? (x * 7919 + y * 10473 + c * 3571) % 65536 : (x * 7 + y * 13 + c * 5) % (maxValue + 1)
        }
        // Palette: entry i is (i*37, 255-i*11, i*5) and, with tRNS, alpha i*16 for the first 8.
        let paletteCount = 1 << min(config.bitDepth, 8)
        let palette = (0..<paletteCount).flatMap { i in
            [UInt8(truncatingIfNeeded: i * 37), UInt8(truncatingIfNeeded: 255 - i * 11), UInt8(truncatingIfNeeded: i * 5)]
        }
        let paletteAlpha = (0..<min(8, paletteCount)).map { UInt8($0 * 16) }

        // Pack samples the way PNG stores them.
        let bitsPerPixel = channels * config.bitDepth
        let rowBytes = (Self.width * bitsPerPixel + 7) / 8
        var packed = [UInt8](repeating: 0, count: rowBytes * Self.height)
        for y in 0..<Self.height {
            for x in 0..<Self.width {
                for c in 0..<channels {
                    let value = sample(x, y, c)
                    let bit = (x * channels + c) * config.bitDepth
                    let index = y * rowBytes + bit / 8
                    switch config.bitDepth {
                    case 16:
                        packed[index] = UInt8(value >> 8)
                        packed[index + 1] = UInt8(value & 0xFF)
                    case 8: packed[index] = UInt8(value)
                    default: packed[index] |= UInt8(value << (8 - config.bitDepth - bit % 8))
                    }
                }
            }
        }
        let transparentGray = sample(0, 0, 0)
        let transparentRGB = (sample(0, 0, 0), sample(0, 0, 1), sample(0, 0, 2))
        let useTRNS = config.transparency
        var output: UnsafeMutablePointer<UInt8>?
        var length = 0
        let status = test_png_write(
            UInt32(Self.width), UInt32(Self.height), Int32(config.bitDepth), config.colorType, config.interlaced ? 1 : 0,
            packed, rowBytes, config.colorType == 3 ? palette : nil, config.colorType == 3 ? Int32(paletteCount) : 0,
            useTRNS && config.colorType == 3 ? paletteAlpha : nil, useTRNS && config.colorType == 3 ? Int32(paletteAlpha.count) : 0,
            useTRNS && config.colorType == 0 ? Int32(transparentGray) : -1,
            useTRNS && config.colorType == 2 ? Int32(transparentRGB.0) : -1,
            Int32(transparentRGB.1), Int32(transparentRGB.2), &output, &length)
        try #require(status == 0)
        let png = Data(bytes: output!, count: length)
        test_png_free(output)

        let header = try ImageDecoder.header(of: png)
        #expect(header.width == Self.width && header.height == Self.height && header.bitDepth == config.bitDepth)
        #expect(header.progressive == config.interlaced)
        #expect(header.hasAlpha == (useTRNS || config.colorType == 4 || config.colorType == 6))
        let decoded = try ImageDecoder().decode(png)
        #expect(decoded.width == Self.width && decoded.height == Self.height)

        func to8(_ value: Int) -> Int {
            config.bitDepth == 16 ? (value * 255 + 32895) >> 16 : value * 255 / ((1 << config.bitDepth) - 1)
        }
        var mismatches = 0
        for y in 0..<Self.height {
            for x in 0..<Self.width {
                let expected: [Int]
                switch config.colorType {
                case 0:
                    let gray = to8(sample(x, y, 0))
                    expected = useTRNS ? [gray, sample(x, y, 0) == transparentGray ? 0 : 255] : [gray]
                case 2:
                    let rgb = (0..<3).map { to8(sample(x, y, $0)) }
                    let isKey = (sample(x, y, 0), sample(x, y, 1), sample(x, y, 2)) == transparentRGB
                    expected = useTRNS ? rgb + [isKey ? 0 : 255] : rgb
                case 3:
                    let index = sample(x, y, 0)
                    let rgb = (0..<3).map { Int(palette[index * 3 + $0]) }
                    expected = useTRNS ? rgb + [index < paletteAlpha.count ? Int(paletteAlpha[index]) : 255] : rgb
                default:
                    expected = (0..<channels).map { to8(sample(x, y, $0)) }
                }
                let actual = Array(decoded.pixel(x: x, y: y)).map(Int.init)
                if actual.count != expected.count || zip(actual, expected).contains(where: { abs($0 - $1) > 1 }) {
                    mismatches += 1
                    if mismatches < 4 { Issue.record("(\(x), \(y)): expected \(expected), got \(actual)") }
                }
            }
        }
        #expect(mismatches == 0)
        let expectedFormat: PixelFormat =
            switch (config.colorType, useTRNS) {
            case (0, false): .gray
            case (0, true), (4, _): .grayAlpha
            case (2, false), (3, false): .rgb
            default: .rgba
            }
        #expect(decoded.format == expectedFormat)
    }

    @Test("PNG encode → decode is lossless in every pixel format", arguments: PixelFormat.allCases)
    func losslessRoundTrip(_ format: PixelFormat) throws {
        let source = TestImages.make(width: 37, height: 23, format: format) { x, y in
            (0..<format.channels).map { UInt8(truncatingIfNeeded: x * 7 + y * 3 + $0 * 50) }
        }
        let decoded = try ImageDecoder().decode(ImageEncoder.png(source))
        #expect(decoded == source)
    }

    @Test("real PNGs: RGB and RGBA photos downsample, alpha preserved")
    func samplePNGs() throws {
        let calla = try ImageDecoder(options: DecodingOptions(maxPixelSize: 370)).decode(TestImages.sample("calla.png"))
        #expect(calla.format == .rgba && calla.width == 370 && calla.height == 240)
        let milkyWay = try ImageDecoder(options: DecodingOptions(maxPixelSize: 512)).decode(TestImages.sample("MilkyWay.png"))
        #expect(milkyWay.format == .rgb && milkyWay.width == 512 && milkyWay.height == 288)
    }
}
