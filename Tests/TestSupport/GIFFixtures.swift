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

    /// A `screenWidth × screenHeight` screen with a four-colour table (red, green, blue, white)
    /// and one frame at `x, y` of `width × height` whose pixel (column, row) has index
    /// `(column / 3 + row / 2) % 4`, `transparent` marking one index transparent. The LZW data is
    /// literal codes only, a clear code every two (as make.py writes its constructions): 4.5 bits
    /// a pixel, so a 2048² frame is 2.4 MB. With `secondFrame`, a 1×1 frame follows: the file is
    /// then an animation, whose first frame `AnimationDecoder` composites on its canvas.
    public static func still(
        screenWidth: Int, screenHeight: Int, x: Int = 0, y: Int = 0, width: Int, height: Int, interlaced: Bool = false,
        transparent: UInt8? = nil, secondFrame: Bool = false
    ) -> Data {
        func little(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
        var bytes = Array("GIF89a".utf8) + little(screenWidth) + little(screenHeight) + [0x81, 0, 0]
        bytes += [255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255]
        if let transparent { bytes += [0x21, 0xF9, 4, 1, 0, 0, transparent, 0] }
        bytes += [0x2C] + little(x) + little(y) + little(width) + little(height) + [interlaced ? 0x40 : 0]
        // Stored rows in the order the data carries them: GIF's four passes when interlaced.
        var order: [Int] = []
        if interlaced {
            for (start, step) in [(0, 8), (4, 8), (2, 4), (1, 2)] { order += Array(stride(from: start, to: height, by: step)) }
        } else {
            order = Array(0..<height)
        }
        var data: [UInt8] = []
        var (bits, count, run) = (0, 0, 0)
        func emit(_ code: Int) {
            bits |= code << count
            count += 3
            while count >= 8 {
                data.append(UInt8(bits & 0xFF))
                bits >>= 8
                count -= 8
            }
        }
        for row in order {
            for column in 0..<width {
                if run == 0 { emit(4) }
                emit((column / 3 + row / 2) % 4)
                run = (run + 1) % 2
            }
        }
        emit(5)
        if count > 0 { data.append(UInt8(bits & 0xFF)) }
        bytes.append(2)
        for start in stride(from: 0, to: data.count, by: 255) {
            let chunk = data[start..<min(start + 255, data.count)]
            bytes.append(UInt8(chunk.count))
            bytes += chunk
        }
        bytes.append(0)
        // One pixel of index 1 (as in `manyFrames`).
        if secondFrame { bytes += [0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x4C, 0x01, 0] }
        return Data(bytes + [0x3B])
    }
}
