import Foundation

/// `Tests/Fixtures/gif` (made by its `make.py`: photos through Pillow, the constructions block
/// by block), and hostile files built here from them where committing them would cost
/// megabytes.
public enum GIFFixtures {
    public static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/gif")

    public static func data(_ name: String) throws -> Data { try Data(contentsOf: directory.appendingPathComponent(name)) }

    /// A 2×2 screen with a four-colour table and `frames` frames of one pixel each (a graphic
    /// control of `delay` hundredths before each), between them `comments` comment blocks: a
    /// few bytes a frame, so 100,000 frames are 2 MB.
    public static func manyFrames(_ frames: Int, comments: Int = 0, delay: UInt8 = 2) -> Data {
        var bytes = Array("GIF89a".utf8) + [2, 0, 2, 0, 0x81, 0, 0] + [255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255]
        let control: [UInt8] = [0x21, 0xF9, 4, 0, delay, 0, 0, 0]
        // One pixel of index 1: clear (4), 1, end (5) in 3-bit codes.
        let image: [UInt8] = [0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x4C, 0x01, 0]
        let comment: [UInt8] = [0x21, 0xFE, 3] + Array("hi!".utf8) + [0]
        for index in 0..<frames {
            if index < comments { bytes += comment }
            bytes += control + image
        }
        for _ in frames..<max(frames, comments) { bytes += comment }
        return Data(bytes + [0x3B])
    }
}
