import Foundation
import Testing
@testable import ImageCodec

@Suite("EXIF orientation")
struct OrientationTests {
    /// Where each stored quadrant colour must appear once the image is upright.
    /// Stored: red top-left, green top-right, blue bottom-left, white bottom-right.
    static let expectedCorners: [Int: (topLeft: [UInt8], topRight: [UInt8], bottomLeft: [UInt8], bottomRight: [UInt8])] = [
        1: ([255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 255]),
        2: ([0, 255, 0], [255, 0, 0], [255, 255, 255], [0, 0, 255]),
        3: ([255, 255, 255], [0, 0, 255], [0, 255, 0], [255, 0, 0]),
        4: ([0, 0, 255], [255, 255, 255], [255, 0, 0], [0, 255, 0]),
        5: ([255, 0, 0], [0, 0, 255], [0, 255, 0], [255, 255, 255]),
        6: ([0, 0, 255], [255, 0, 0], [255, 255, 255], [0, 255, 0]),
        7: ([255, 255, 255], [0, 255, 0], [0, 0, 255], [255, 0, 0]),
        8: ([0, 255, 0], [255, 255, 255], [255, 0, 0], [0, 0, 255])
    ]

    @Test("all eight orientations are reported and applied", arguments: 1...8, [false, true])
    func orientation(_ value: Int, bigEndian: Bool) throws {
        let stored = TestImages.quadrants(width: 64, height: 32)
        let jpeg = TestImages.withOrientation(try TestImages.faithfulJPEG(stored), value, bigEndian: bigEndian)
        let header = try ImageDecoder.header(of: jpeg)
        #expect(header.orientation.rawValue == value)
        #expect(header.width == 64 && header.height == 32)
        let swaps = value >= 5
        #expect(header.displayWidth == (swaps ? 32 : 64) && header.displayHeight == (swaps ? 64 : 32))

        for limit in [nil, 16] as [Int?] {
            let upright = try ImageDecoder(options: DecodingOptions(maxPixelSize: limit)).decode(jpeg)
            let (w, h) = (upright.width, upright.height)
            #expect(w == (limit == nil ? header.displayWidth : header.displayWidth / 4))
            #expect(h == (limit == nil ? header.displayHeight : header.displayHeight / 4))
            let expected = try #require(Self.expectedCorners[value])
            func near(_ x: Int, _ y: Int, _ colour: [UInt8]) -> Bool {
                Array(upright.pixel(x: x, y: y)).elementsEqual(colour, by: { abs(Int($0) - Int($1)) <= 8 })
            }
            #expect(near(1, 1, expected.topLeft), "orientation \(value) top-left")
            #expect(near(w - 2, 1, expected.topRight), "orientation \(value) top-right")
            #expect(near(1, h - 2, expected.bottomLeft), "orientation \(value) bottom-left")
            #expect(near(w - 2, h - 2, expected.bottomRight), "orientation \(value) bottom-right")
        }
        let unrotated = try ImageDecoder(options: DecodingOptions(appliesOrientation: false)).decode(jpeg)
        #expect(unrotated.width == 64 && unrotated.height == 32)
    }

    @Test("invalid or malformed EXIF means no orientation, not an error")
    func malformedExif() throws {
        let jpeg = try TestImages.faithfulJPEG(TestImages.quadrants(width: 16, height: 16))
        #expect(try ImageDecoder.header(of: TestImages.withOrientation(jpeg, 9)).orientation == .up)
        #expect(try ImageDecoder.header(of: TestImages.withOrientation(jpeg, 0)).orientation == .up)
        #expect(ExifReader.orientation(tiff: [0x49, 0x49, 42, 0, 0xFF, 0xFF, 0xFF, 0x7F]) == nil)
        #expect(ExifReader.orientation(tiff: [0x49, 0x49]) == nil)
        #expect(ExifReader.orientation(app1: Array("Exif".utf8)) == nil)
    }
}
