import Foundation
import Testing
import TestSupport

@testable import ImageCodec

@Suite("Metadata")
struct MetadataTests {
    private static let photo = TestImages.quadrants(width: 48, height: 32)

    /// A JPEG whose EXIF turns it a quarter clockwise and names an artist, a copyright and a place.
    private static func sourceJPEG(bigEndian: Bool = false) throws -> (Data, [UInt8]) {
        let block = ExifFixture.block(orientation: 6, bigEndian: bigEndian)
        return (ExifFixture.inserting(block, into: try TestImages.faithfulJPEG(photo)), block)
    }

    @Test("a JPEG's EXIF is read whole, its orientation set to upright", arguments: [false, true])
    func readsJPEG(bigEndian: Bool) throws {
        let (jpeg, block) = try Self.sourceJPEG(bigEndian: bigEndian)
        let exif = try #require(try ImageSource(data: jpeg).metadata().exif)
        #expect(exif.count == block.count)
        #expect(ExifFixture.orientation(exif) == 1)
        // Every other byte as it was: the GPS IFD, the artist, the maker.
        let changed = exif.indices.filter { exif[$0] != block[$0] }
        #expect(changed.count == 1)
        #expect(ExifFixture.text(exif, ExifFixture.artistTag) == "Ann Example")
        #expect(ExifFixture.tags(exif)?[ExifFixture.gpsTag] != nil)
    }

    @Test("the copyright keeps Artist and Copyright only; blank tags name no one")
    func copyright() throws {
        let (jpeg, _) = try Self.sourceJPEG(bigEndian: true)
        let kept = try #require(try ImageSource(data: jpeg).metadata().copyright.exif)
        let tags = try #require(ExifFixture.tags(kept))
        #expect(Set(tags.keys) == [ExifFixture.artistTag, ExifFixture.copyrightTag])
        #expect(ExifFixture.text(kept, ExifFixture.artistTag) == "Ann Example")
        #expect(ExifFixture.text(kept, ExifFixture.copyrightTag) == "(c) Example Photo Ltd")
        let short = ImageMetadata(exif: ExifFixture.block(artist: "Al", copyright: nil)).copyright
        #expect(short.exif.flatMap { ExifFixture.text($0, ExifFixture.artistTag) } == "Al")
        #expect(ImageMetadata(exif: ExifFixture.block(artist: "   ", copyright: "    ")).copyright.isEmpty)
        #expect(ImageMetadata(exif: ExifFixture.block(artist: nil, copyright: nil)).copyright.isEmpty)
        // A camera's padded tags (SampleImages' Kite.jpg has both, all spaces).
        #expect(try ImageSource(data: TestImages.sample("Kite.jpg")).metadata().copyright.isEmpty)
        #expect(ImageMetadata.none.copyright.isEmpty)
    }

    @Test("each encoder writes the block where its format keeps it, and it reads back", arguments: [ImageFormat.jpeg, .png, .webp, .avif])
    func roundTrip(format: ImageFormat) throws {
        let (jpeg, _) = try Self.sourceJPEG()
        let source = try ImageSource(data: jpeg)
        let metadata = source.metadata()
        let bitmap = try source.decode(DecodingOptions()).bitmap
        let output = try ImageEncoder.encode(bitmap, as: format, avifOptions: AVIFEncodingOptions(speed: 9), metadata: metadata)
        let reread = try ImageSource(data: output)
        #expect(reread.metadata() == metadata)
        // Upright pixels with an upright tag: no reader turns them again.
        #expect(reread.header.orientation == .up)
        #expect((reread.header.displayWidth, reread.header.displayHeight) == (32, 48))
        // And the pixels are untouched by the container edit.
        let plain = try ImageEncoder.encode(bitmap, as: format, avifOptions: AVIFEncodingOptions(speed: 9))
        #expect(try ImageDecoder().decode(output) == ImageDecoder().decode(plain))
        #expect(output.count > plain.count + metadata.exif!.count)
    }

    @Test("libwebp's own webpmux finds the EXIF chunk, with and without alpha and a profile", arguments: [false, true])
    func webpForWebpmux(alpha: Bool) throws {
        let block = ExifFixture.block()
        var bitmap = alpha ? TestImages.texture(width: 40, height: 30, format: .rgba) : TestImages.texture(width: 40, height: 30)
        bitmap.iccProfile = alpha ? try ColorFixtures.profile("DisplayP3.icc") : nil
        let webp = try ImageEncoder.webp(bitmap, metadata: ImageMetadata(exif: block))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("metadata-\(UUID().uuidString).webp")
        defer { try? FileManager.default.removeItem(at: file) }
        try webp.write(to: file)
        let exif = try ReferenceTool.output("webpmux", package: "webp", suffix: ".exif") { ["-get", "exif", file.path, "-o", $0.path] }
        #expect([UInt8](exif) == block)
        let decoded = try WebPFixtures.dwebp(file)
        #expect((decoded.width, decoded.height) == (40, 30))
        #expect(try ImageSource(data: webp).header.hasAlpha == alpha)
    }

    @Test("libheif's heif-info lists the AVIF's Exif item")
    func avifForHeifInfo() throws {
        let avif = try ImageEncoder.avif(Self.photo, options: AVIFEncodingOptions(speed: 9), metadata: ImageMetadata(exif: ExifFixture.block()))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("metadata-\(UUID().uuidString).avif")
        defer { try? FileManager.default.removeItem(at: file) }
        try avif.write(to: file)
        let info = try ReferenceTool.standardOutput("heif-info", package: "libheif-examples", [file.path])
        #expect(info.contains("Exif"))
    }

    @Test("a JPEG keeps its JFIF header first and the EXIF right after it")
    func jpegPlacement() throws {
        let jpeg = try ImageEncoder.jpeg(
            Self.photo, options: JPEGEncodingOptions(encoder: .libjpegTurbo), metadata: ImageMetadata(exif: ExifFixture.block()))
        let markers = JPEGSegments.markers(jpeg)
        #expect(Array(markers.prefix(2)) == [0xE0, 0xE1])
        let perceptual = try ImageEncoder.jpeg(Self.photo, metadata: ImageMetadata(exif: ExifFixture.block()))
        #expect(JPEGSegments.markers(perceptual).filter { $0 == 0xE1 }.count == 1)
    }

    @Test("blocks an encoder would not write are an invalidArgument, before any encoding")
    func refusals() throws {
        for exif in [[UInt8](repeating: 0, count: 16), Array("Exif".utf8), [UInt8](ExifFixture.block()) + [UInt8](repeating: 0, count: 65_533)] {
            for format in [ImageFormat.jpeg, .png, .webp, .avif] {
                #expect {
                    try ImageEncoder.encode(Self.photo, as: format, metadata: ImageMetadata(exif: exif))
                } throws: { error in
                    guard case .invalidArgument = error as? ImageCodecError else { return false }
                    return true
                }
            }
        }
        #expect(throws: ImageCodecError.self) { try ImageMetadata(exif: ExifFixture.block()).written(intoJPEG: Data([0x89, 0x50, 0x4E, 0x47])) }
    }

    @Test("a source's block past the EXIF limit, or not TIFF, is left out whole")
    func sourceLimits() throws {
        let (jpeg, block) = try Self.sourceJPEG()
        let tight = DecodingLimits(maxEXIFBytes: block.count - 1)
        #expect(try ImageSource(data: jpeg, limits: tight).metadata().isEmpty)
        #expect(try ImageSource(data: jpeg, limits: DecodingLimits(maxEXIFBytes: block.count)).metadata().exif?.count == block.count)
        let junk = ExifFixture.inserting([0x12, 0x34, 0x56, 0x78, 0, 0, 0, 0], into: try TestImages.faithfulJPEG(Self.photo))
        #expect(try ImageSource(data: junk).metadata().isEmpty)
        #expect(try ImageSource(data: TestImages.sample("Bridge.jpg")).metadata().isEmpty)
        // A PNG whose eXIf is past the limit: none, not a cut one.
        let upright = ExifFixture.block()
        let png = try ImageEncoder.png(Self.photo, metadata: ImageMetadata(exif: upright))
        #expect(try ImageSource(data: png, limits: DecodingLimits(maxEXIFBytes: upright.count - 1)).metadata().isEmpty)
        #expect(try ImageSource(data: png).metadata().exif == upright)
    }

    @Test("an AVIF's Exif item is found by the container walk, its orientation set upright")
    func heifExifItem() throws {
        // libheif turns the pixels itself, so the block read back must say upright.
        let avif = try ImageEncoder.avif(
            Self.photo, options: AVIFEncodingOptions(speed: 9), metadata: ImageMetadata(exif: ExifFixture.block(orientation: 8)))
        let exif = try #require(try ImageSource(data: avif).metadata().exif)
        #expect(ExifFixture.orientation(exif) == 1)
        #expect(ExifFixture.text(exif, ExifFixture.copyrightTag) == "(c) Example Photo Ltd")
    }

    @Test("heif-enc's Exif item in a HEIC is read through the container walk, upright")
    func heifEncExif() throws {
        let source = try ImageSource(data: HEIFFixtures.data("small-exif.heic"))
        // heif-enc copied the JPEG's block (orientation 6) without turning the pixels; libheif
        // ignores EXIF orientation, so the image is as stored and the block must say so.
        #expect((source.header.displayWidth, source.header.displayHeight) == (96, 60))
        let exif = try #require(source.metadata().exif)
        #expect(ExifFixture.orientation(exif) == 1)
        #expect(ExifFixture.text(exif, ExifFixture.artistTag) == "Al")
        #expect(ExifFixture.text(exif, ExifFixture.copyrightTag) == "(c) Example Photo Ltd")
        #expect(try ImageSource(data: HEIFFixtures.data("small.heic")).metadata().isEmpty)
    }
}
