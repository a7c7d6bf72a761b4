import Foundation

/// `Tests/Fixtures/heif` (see its README), with libheif's own `heif-convert` (HEIC) and
/// libavif's own `avifdec` (AVIF) as the reference decoders.
public enum HEIFFixtures {
    public static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/heif")

    /// kite.heic, kite.avif, kite-p3.heic, kite-10bit.heic, calla-alpha.heic, calla-alpha.avif.
    public static func data(_ name: String) throws -> Data { try Data(contentsOf: directory.appendingPathComponent(name)) }

    /// `heif-convert` of the fixture `name` to PNG: the file's primary image as libheif's own
    /// tool decodes it (8 bits, no ICC profile written).
    public static func heifConvert(_ name: String) throws -> Data {
        try ReferenceTool.output("heif-convert", package: "libheif-examples", suffix: ".png") {
            [directory.appendingPathComponent(name).path, $0.path]
        }
    }

    /// `avifdec` of the fixture `name` to an 8-bit PNG: the primary image as libavif's own tool
    /// decodes it (dav1d, libavif's default chroma upsampling), transformations not applied.
    public static func avifdec(_ name: String) throws -> Data {
        try ReferenceTool.output("avifdec", package: "libavif-bin", suffix: ".png") {
            ["--codec", "dav1d", "--depth", "8", directory.appendingPathComponent(name).path, $0.path]
        }
    }
}
