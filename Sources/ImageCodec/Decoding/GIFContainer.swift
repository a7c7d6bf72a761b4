/// A GIF's block structure, walked here before giflib sees any of it (GIF89a, "Appendix"
/// grammar): the logical screen, the colour tables, each frame's descriptor, graphic control
/// and LZW data, the loop count. giflib is then handed one frame's LZW data at a time (see
/// `GIFDecoder`), never the file.
///
/// The walk reads block headers and sub-block lengths only: its cost is proportional to the
/// file, whatever the file says (10,000 comment blocks are 10,000 length bytes), and it
/// allocates nothing per block. Every number is range-checked where it is read.
struct GIFContainer: Sendable, Hashable {
    /// The logical screen: the canvas every frame is composited on.
    var screenWidth: Int
    var screenHeight: Int
    /// The global colour table's bytes (3 per entry), if any.
    var globalPalette: Range<Int>?
    /// Whole frames in the file: each with its descriptor and complete LZW data.
    var frameCount: Int
    /// How many times a browser plays the animation: 1 without a NETSCAPE2.0 loop extension,
    /// N + 1 for a loop count N (browsers play a GIF once and then loop N times), 0 forever.
    var plays: Int
    /// The file ends before its trailer (a cut download): the frames are the whole ones
    /// before the cut, the partial one dropped.
    var truncated: Bool
    /// The first frame.
    var firstFrame: GIFFrame
    /// Where the blocks after the screen and global table begin.
    var blocksStart: Int

    /// Walks the whole file: every frame is found and counted, none decoded. Throws
    /// `truncatedData` when the file ends before its first whole frame, `corruptData` for
    /// anything the grammar does not allow.
    init(_ bytes: UnsafeRawBufferPointer) throws(ImageCodecError) {
        guard bytes.count >= 6 else { throw .truncatedData }
        let signature = String(decoding: bytes[0..<6], as: UTF8.self)
        guard signature == "GIF87a" || signature == "GIF89a" else { throw .corruptData("not a GIF87a or GIF89a file") }
        guard bytes.count >= 13 else { throw .truncatedData }
        var width = Self.uint16(bytes, 6), height = Self.uint16(bytes, 8)
        let flags = bytes[10]
        var offset = 13
        if flags & 0x80 != 0 {
            let size = 3 << (Int(flags & 0x07) + 1)
            guard offset + size <= bytes.count else { throw .truncatedData }
            globalPalette = offset..<offset + size
            offset += size
        } else {
            globalPalette = nil
        }
        blocksStart = offset
        var walker = GIFWalker(offset: offset)
        var first: GIFFrame?
        var count = 0
        var cut = false
        do {
            while let frame = try walker.next(bytes) {
                if first == nil { first = frame }
                count += 1
                // Cancellation matters for files of 100,000 frames.
                if count % 1024 == 0 { try ImageCodecError.checkCancellation() }
            }
        } catch .truncatedData where first != nil {
            cut = true
        }
        guard let first else { throw .corruptData("no image in the GIF") }
        // A screen with a zero side (some old writers) is the first frame's extent, as browsers
        // show it.
        if width == 0 || height == 0 { (width, height) = (first.x + first.width, first.y + first.height) }
        (screenWidth, screenHeight) = (width, height)
        frameCount = count
        truncated = cut
        firstFrame = first
        plays = walker.loopCount.map { $0 == 0 ? 0 : min($0 + 1, 65535) } ?? 1
    }

    static func uint16(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> Int {
        Int(bytes[offset]) | Int(bytes[offset + 1]) << 8
    }
}

/// One frame as its blocks describe it.
struct GIFFrame: Sendable, Hashable {
    /// The frame's rectangle on the logical screen (it may reach past the screen: what does is
    /// not shown).
    var x: Int
    var y: Int
    var width: Int
    var height: Int
    /// The local colour table's bytes, if any (else the global table's).
    var palette: Range<Int>?
    var interlaced: Bool
    /// The palette index drawn as nothing (the graphic control's transparency), if any.
    var transparentIndex: Int?
    /// What happens to the frame's area before the next frame is drawn.
    var disposal: Disposal
    /// The graphic control's delay, in hundredths of a second (0 when there is none).
    var delayCentiseconds: Int
    /// The LZW data: the minimum-code-size byte, the sub-blocks, their terminator.
    var data: Range<Int>

    enum Disposal: Sendable, Hashable {
        /// Left as drawn (0: unspecified, 1: do not dispose, and the reserved 4-7).
        case keep
        /// 2: the area becomes transparent (browsers clear it rather than paint the
        /// background colour).
        case clear
        /// 3: the area goes back to what it was before the frame was drawn.
        case restore
    }

    /// How long browsers show the frame: 0 and 1 hundredths of a second show as 100 ms.
    var durationMilliseconds: Int { delayCentiseconds <= 1 ? 100 : delayCentiseconds * 10 }
}

/// A cursor over a GIF's blocks: each `next` reads up to and including the next frame's data.
struct GIFWalker: Sendable {
    /// Where the next block starts.
    var offset: Int
    /// The NETSCAPE2.0 loop count, once seen.
    var loopCount: Int?
    /// The graphic control waiting for the next image.
    private var control: (transparent: Int?, disposal: GIFFrame.Disposal, delay: Int)?

    init(offset: Int) {
        self.offset = offset
    }

    /// The next frame, or nil at the trailer. Throws `truncatedData` when the file ends inside
    /// a block (or without a trailer), `corruptData` for a block the grammar does not allow.
    mutating func next(_ bytes: UnsafeRawBufferPointer) throws(ImageCodecError) -> GIFFrame? {
        while true {
            guard offset < bytes.count else { throw .truncatedData }
            let introducer = bytes[offset]
            switch introducer {
            case 0x3B:
                return nil
            case 0x21:
                try readExtension(bytes)
            case 0x2C:
                return try readImage(bytes)
            default:
                throw .corruptData("unknown GIF block 0x\(String(introducer, radix: 16)) at byte \(offset)")
            }
        }
    }

    /// An extension: the graphic control and the NETSCAPE2.0 loop are read, the rest skipped.
    private mutating func readExtension(_ bytes: UnsafeRawBufferPointer) throws(ImageCodecError) {
        guard offset + 2 < bytes.count else { throw .truncatedData }
        let label = bytes[offset + 1]
        var at = offset + 2
        let first = Int(bytes[at])
        switch label {
        case 0xF9 where first >= 4:
            guard at + 5 <= bytes.count else { throw .truncatedData }
            let flags = bytes[at + 1]
            let disposal: GIFFrame.Disposal =
                switch (flags >> 2) & 0x07 {
                case 2: .clear
                case 3: .restore
                default: .keep
                }
            control = (
                transparent: flags & 0x01 != 0 ? Int(bytes[at + 4]) : nil, disposal: disposal,
                delay: GIFContainer.uint16(bytes, at + 2)
            )
        case 0xFF where first == 11:
            guard at + 12 <= bytes.count else { throw .truncatedData }
            let identifier = String(decoding: bytes[(at + 1)..<(at + 12)], as: UTF8.self)
            // NETSCAPE2.0 (and ANIMEXTS1.0, the same): a sub-block [1, count lo, count hi].
            if identifier == "NETSCAPE2.0" || identifier == "ANIMEXTS1.0" {
                let next = at + 12
                if next + 4 <= bytes.count, bytes[next] >= 3, bytes[next + 1] == 1 {
                    loopCount = GIFContainer.uint16(bytes, next + 2)
                }
            }
        default:
            break
        }
        at = try Self.skipSubBlocks(bytes, from: at)
        offset = at
    }

    /// An image descriptor, its local table and its LZW data.
    private mutating func readImage(_ bytes: UnsafeRawBufferPointer) throws(ImageCodecError) -> GIFFrame {
        let start = offset
        guard start + 10 <= bytes.count else { throw .truncatedData }
        let flags = bytes[start + 9]
        var at = start + 10
        var palette: Range<Int>?
        if flags & 0x80 != 0 {
            let size = 3 << (Int(flags & 0x07) + 1)
            guard at + size <= bytes.count else { throw .truncatedData }
            palette = at..<at + size
            at += size
        }
        guard at < bytes.count else { throw .truncatedData }
        let codeSize = Int(bytes[at])
        guard (1...8).contains(codeSize) else {
            throw .corruptData("LZW minimum code size \(codeSize) at byte \(at) is outside 1-8")
        }
        let end = try Self.skipSubBlocks(bytes, from: at + 1)
        let control = control ?? (transparent: nil, disposal: .keep, delay: 0)
        self.control = nil
        offset = end
        return GIFFrame(
            x: GIFContainer.uint16(bytes, start + 1), y: GIFContainer.uint16(bytes, start + 3),
            width: GIFContainer.uint16(bytes, start + 5), height: GIFContainer.uint16(bytes, start + 7), palette: palette,
            interlaced: flags & 0x40 != 0, transparentIndex: control.transparent, disposal: control.disposal,
            delayCentiseconds: control.delay, data: at..<end)
    }

    /// The offset after a run of sub-blocks (length byte, data) and its zero terminator.
    private static func skipSubBlocks(_ bytes: UnsafeRawBufferPointer, from start: Int) throws(ImageCodecError) -> Int {
        var at = start
        while true {
            guard at < bytes.count else { throw .truncatedData }
            let length = Int(bytes[at])
            at += 1 + length
            if length == 0 { return at }
        }
    }
}
