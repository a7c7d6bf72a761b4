import Foundation

/// `Tests/Fixtures/webp` (see its README), libwebp's own `dwebp` as the reference decoder, and
/// containers the tools cannot make, built chunk by chunk.
public enum WebPFixtures {
    public static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/webp")

    /// kite.webp, calla-alpha.webp, calla-lossless.webp, kite-orientation6.webp, kite-p3.webp,
    /// kite-animated.webp.
    public static func data(_ name: String) throws -> Data { try Data(contentsOf: directory.appendingPathComponent(name)) }

    /// `dwebp -pam` of `file`: width, height and RGBA pixels, as libwebp's own tool decodes them.
    public static func dwebp(_ file: URL) throws -> (width: Int, height: Int, rgba: [UInt8]) {
        let pam = [UInt8](try ReferenceTool.output("dwebp", package: "webp", suffix: ".pam") { ["-quiet", "-pam", file.path, "-o", $0.path] })
        // "P7\nWIDTH w\nHEIGHT h\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n" then the pixels.
        let marker = Array("ENDHDR\n".utf8)
        guard let end = (0...(pam.count - marker.count)).first(where: { pam[$0..<$0 + marker.count].elementsEqual(marker) }) else {
            throw ReferenceTool.Failure(description: "dwebp wrote no PAM header")
        }
        let header = String(decoding: pam[..<end], as: UTF8.self).split(separator: "\n")
        func field(_ name: String) -> Int? { header.first { $0.hasPrefix(name + " ") }.flatMap { Int($0.dropFirst(name.count + 1)) } }
        guard let width = field("WIDTH"), let height = field("HEIGHT") else { throw ReferenceTool.Failure(description: "dwebp wrote no size") }
        return (width, height, Array(pam[(end + marker.count)...]))
    }

    /// A RIFF chunk: tag, little-endian size, payload, padding to an even length.
    public static func chunk(_ tag: String, _ payload: [UInt8]) -> [UInt8] {
        Array(tag.utf8) + littleEndian(payload.count, 4) + payload + (payload.count & 1 == 1 ? [0] : [])
    }

    /// A RIFF WEBP file of `chunks`.
    public static func container(_ chunks: [UInt8]) -> Data {
        Data(Array("RIFF".utf8) + littleEndian(4 + chunks.count, 4) + Array("WEBP".utf8) + chunks)
    }

    /// VP8X: flags (0x10 alpha, 0x02 animation, 0x20 ICC, 0x08 EXIF) and the canvas.
    public static func vp8x(flags: UInt8, width: Int, height: Int) -> [UInt8] {
        chunk("VP8X", [flags, 0, 0, 0] + littleEndian(width - 1, 3) + littleEndian(height - 1, 3))
    }

    /// One animation frame: `image` (the chunks of a simple WebP after its 12-byte RIFF header)
    /// at (`x`, `y`) (even), `width × height`.
    public static func anmf(x: Int, y: Int, width: Int, height: Int, image: [UInt8]) -> [UInt8] {
        chunk(
            "ANMF",
            littleEndian(x / 2, 3) + littleEndian(y / 2, 3) + littleEndian(width - 1, 3) + littleEndian(height - 1, 3)
                + littleEndian(100, 3) + [0] + image)
    }

    public static func littleEndian(_ value: Int, _ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }
}
