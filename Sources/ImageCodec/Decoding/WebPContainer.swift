import Foundation

/// What a WebP file's RIFF container holds, read without decoding anything: the canvas, the
/// first image's bitstream (a still image's, or an animation's first frame's) and where the ICC
/// profile and EXIF block are. Ranges are offsets into the file, so nothing is copied.
///
/// The scan walks the chunk headers once (work proportional to the bytes read, nothing
/// allocated); an animation's further frames are skipped, never decoded.
struct WebPContainer: Sendable, Hashable {
    /// The canvas: what the file shows (VP8X); 0 in a simple file, whose size is its bitstream's.
    var canvasWidth: Int
    var canvasHeight: Int
    /// The bytes libwebp decodes: the whole file for a still image, or the first frame's ALPH +
    /// VP8 / VP8L chunks (libwebp takes those without a RIFF header).
    var bitstream: Range<Int>
    /// Where the first image sits on the canvas (an animation frame may cover only part of it);
    /// a still image covers it all (its size is the bitstream's).
    var frameX = 0
    var frameY = 0
    /// The first frame's size as ANMF declares it (0 for a still image).
    var frameWidth = 0
    var frameHeight = 0
    var isAnimated: Bool
    /// VP8X's alpha flag: some frame has alpha.
    var declaresAlpha: Bool
    /// The ICCP chunk's payload, if any.
    var iccProfile: Range<Int>?
    /// The EXIF chunk's payload, if any.
    var exif: Range<Int>?
    /// ANMF chunks in the file (1 for a still image).
    var frameCount = 1
    /// ANIM's loop count: how many times the animation plays (0: forever).
    var plays = 0

    private struct Chunk {
        var tag: String
        var payload: Range<Int>
    }

    /// Reads the chunk list of `bytes`. Throws `truncatedData` when a chunk runs past the end
    /// and `corruptData` for a container that is not WebP's.
    init(_ bytes: UnsafeRawBufferPointer) throws(ImageCodecError) {
        guard bytes.count >= 12 else { throw .truncatedData }
        guard Self.tag(bytes, at: 0) == "RIFF", Self.tag(bytes, at: 8) == "WEBP" else { throw .corruptData("not a RIFF WEBP container") }
        // The RIFF size may promise more than there is (truncated) but never less than a chunk
        // header; bytes after it are ignored, as libwebp does.
        let declared = Int(Self.uint32(bytes, at: 4))
        guard declared >= 4 + 8 else { throw .corruptData("RIFF size \(declared) is too small") }
        guard declared + 8 <= bytes.count else { throw .truncatedData }
        let end = declared + 8
        var offset = 12
        var first: Chunk?
        var vp8x: Range<Int>?
        var (iccProfile, exif): (Range<Int>?, Range<Int>?) = (nil, nil)
        var (frames, anim) = (0, Range<Int>?.none)
        while offset + 8 <= end {
            let tag = Self.tag(bytes, at: offset)
            let size = Int(Self.uint32(bytes, at: offset + 4))
            let payload = offset + 8..<offset + 8 + size
            guard payload.upperBound <= end else { throw .truncatedData }
            switch tag {
            case "VP8X" where vp8x == nil: vp8x = payload
            case "ICCP" where iccProfile == nil: iccProfile = payload
            case "EXIF" where exif == nil: exif = payload
            case "ANMF" where first == nil, "VP8 " where first == nil, "VP8L" where first == nil: first = Chunk(tag: tag, payload: payload)
            case "ANIM" where anim == nil: anim = payload
            default: break
            }
            if tag == "ANMF" { frames += 1 }
            offset = payload.upperBound + (size & 1)
        }
        guard let first else { throw .corruptData("no image data in the WebP container") }
        (self.iccProfile, self.exif) = (iccProfile, exif)
        declaresAlpha = false
        isAnimated = first.tag == "ANMF"
        if isAnimated {
            frameCount = frames
            if let anim, anim.count >= 6 { plays = Int(bytes[anim.lowerBound + 4]) | Int(bytes[anim.lowerBound + 5]) << 8 }
        }
        if let vp8x {
            guard vp8x.count >= 10 else { throw .corruptData("VP8X chunk too short") }
            let flags = bytes[vp8x.lowerBound]
            declaresAlpha = flags & 0x10 != 0
            canvasWidth = Int(Self.uint24(bytes, at: vp8x.lowerBound + 4)) + 1
            canvasHeight = Int(Self.uint24(bytes, at: vp8x.lowerBound + 7)) + 1
        } else {
            (canvasWidth, canvasHeight) = (0, 0)
        }
        if isAnimated {
            guard vp8x != nil else { throw .corruptData("an animation frame without a VP8X chunk") }
            let header = first.payload
            guard header.count > 16 else { throw .corruptData("ANMF chunk too short") }
            let x = Int(Self.uint24(bytes, at: header.lowerBound)) * 2
            let y = Int(Self.uint24(bytes, at: header.lowerBound + 3)) * 2
            let width = Int(Self.uint24(bytes, at: header.lowerBound + 6)) + 1
            let height = Int(Self.uint24(bytes, at: header.lowerBound + 9)) + 1
            guard x + width <= canvasWidth, y + height <= canvasHeight else {
                throw .corruptData("the first frame (\(width)×\(height) at \(x),\(y)) leaves the \(canvasWidth)×\(canvasHeight) canvas")
            }
            (frameX, frameY, frameWidth, frameHeight) = (x, y, width, height)
            bitstream = header.lowerBound + 16..<header.upperBound
        } else {
            // libwebp reads the still image from the whole file (VP8X, ALPH, VP8 / VP8L).
            bitstream = 0..<end
        }
    }

    static func tag(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> String {
        String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
    }

    static func uint32(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }

    static func uint24(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        (0..<3).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }
}

extension WebPContainer {
    /// `file` (libwebp's output) with an ICCP chunk carrying `iccProfile` and an EXIF chunk
    /// carrying `exif`: a VP8X chunk is added (or its flags set) and the RIFF size updated, as
    /// the container specification orders (ICCP after VP8X, EXIF after the image). Neither:
    /// `file` as it is.
    static func adding(iccProfile: [UInt8]?, exif: [UInt8]?, to file: Data, width: Int, height: Int, hasAlpha: Bool) -> Data {
        guard iccProfile != nil || exif != nil else { return file }
        func le(_ value: Int, _ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        func chunk(_ tag: String, _ payload: [UInt8]) -> [UInt8] {
            Array(tag.utf8) + le(payload.count, 4) + payload + (payload.count & 1 == 1 ? [0] : [])
        }
        let bytes = [UInt8](file)
        let flags: UInt8 = (iccProfile == nil ? 0 : 0x20) | (exif == nil ? 0 : 0x08)
        var body: [UInt8]
        if bytes.count >= 16 && bytes[12..<16].elementsEqual("VP8X".utf8) {
            // RIFF header (12) + VP8X chunk (8 + 10): the flags are the chunk's first byte.
            var head = Array(bytes[12..<30])
            head[8] |= flags
            body = head + (iccProfile.map { chunk("ICCP", $0) } ?? []) + bytes[30...]
        } else {
            let vp8x = chunk("VP8X", [flags | (hasAlpha ? 0x10 : 0), 0, 0, 0] + le(width - 1, 3) + le(height - 1, 3))
            body = vp8x + (iccProfile.map { chunk("ICCP", $0) } ?? []) + bytes[12...]
        }
        body += exif.map { chunk("EXIF", $0) } ?? []
        return Data(Array("RIFF".utf8) + le(4 + body.count, 4) + Array("WEBP".utf8) + body)
    }
}

/// One ANMF frame of an animated WebP, as its chunk describes it.
struct WebPFrame: Sendable, Hashable {
    var x: Int
    var y: Int
    var width: Int
    var height: Int
    var durationMilliseconds: Int
    /// Alpha-blend over the canvas (else replace what the frame covers).
    var blends: Bool
    /// Clear the frame's area to transparent before the next frame.
    var disposesToBackground: Bool
    /// The frame's ALPH + VP8 / VP8L chunks, which libwebp decodes without a RIFF header.
    var bitstream: Range<Int>
}

/// A cursor over an animated WebP's chunks: each `next` finds the next ANMF chunk.
struct WebPFrameWalker: Sendable {
    private var offset = 12
    private let end: Int

    /// Frames of `bytes`, a file `WebPContainer` has read (its RIFF size is checked there).
    init(_ bytes: UnsafeRawBufferPointer) {
        end = min(bytes.count, Int(WebPContainer.uint32(bytes, at: 4)) + 8)
    }

    /// The next frame, or nil after the last. Throws `corruptData` for a frame chunk too short
    /// or reaching past the canvas.
    mutating func next(_ bytes: UnsafeRawBufferPointer, canvas: (width: Int, height: Int)) throws(ImageCodecError) -> WebPFrame? {
        while offset + 8 <= end {
            let tag = WebPContainer.tag(bytes, at: offset)
            let size = Int(WebPContainer.uint32(bytes, at: offset + 4))
            let payload = offset + 8..<min(offset + 8 + size, end)
            offset = offset + 8 + size + (size & 1)
            guard tag == "ANMF" else { continue }
            guard payload.count > 16 else { throw .corruptData("ANMF chunk too short") }
            let at = payload.lowerBound
            let frame = WebPFrame(
                x: Int(WebPContainer.uint24(bytes, at: at)) * 2, y: Int(WebPContainer.uint24(bytes, at: at + 3)) * 2,
                width: Int(WebPContainer.uint24(bytes, at: at + 6)) + 1, height: Int(WebPContainer.uint24(bytes, at: at + 9)) + 1,
                durationMilliseconds: Int(WebPContainer.uint24(bytes, at: at + 12)), blends: bytes[at + 15] & 0x02 == 0,
                disposesToBackground: bytes[at + 15] & 0x01 != 0, bitstream: at + 16..<payload.upperBound)
            guard frame.x + frame.width <= canvas.width, frame.y + frame.height <= canvas.height else {
                throw .corruptData(
                    "a frame (\(frame.width)×\(frame.height) at \(frame.x),\(frame.y)) leaves the \(canvas.width)×\(canvas.height) canvas")
            }
            return frame
        }
        return nil
    }
}
