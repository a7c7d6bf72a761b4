/// The canvas an animation's frames are composited on, as browsers show them: RGBA, transparent
/// before the first frame, each frame drawn over what the previous ones left, then disposed of
/// as it asks before the next is drawn.
///
/// GIF and animated WebP differ only in how a frame's pixels arrive (palette indices with a
/// transparent index, or decoded RGBA with or without blending); disposal and the canvas are
/// the same, so both go through here. Every buffer is charged (`ChargedArray`): the canvas, a
/// decoder's row, and the area a "restore" frame covers.
struct AnimationCanvas {
    let width: Int
    let height: Int
    /// width × height × 4 bytes, straight (not premultiplied) alpha.
    var pixels: ChargedArray<UInt8>
    /// What the last frame asked for its area before the next frame is drawn.
    private var disposal: (area: Area, kind: GIFFrame.Disposal)?
    /// The area a "restore" frame covered, as it was before the frame was drawn.
    private var saved: ChargedArray<UInt8>?

    /// A frame's rectangle clipped to the canvas (empty when it lies outside).
    struct Area: Hashable {
        var columns: Range<Int>
        var rows: Range<Int>
        var isEmpty: Bool { columns.isEmpty || rows.isEmpty }
    }

    init(width: Int, height: Int) throws(ImageCodecError) {
        (self.width, self.height) = (width, height)
        pixels = try ChargedArray(repeating: 0, count: width * height * 4)
    }

    /// The part of `x, y, width × height` on the canvas.
    func area(x: Int, y: Int, width: Int, height: Int) -> Area {
        let columns = min(x, self.width)..<min(x + width, self.width)
        let rows = min(y, self.height)..<min(y + height, self.height)
        return Area(columns: columns, rows: rows)
    }

    /// Disposes of the previous frame and gets ready to draw one over `area` that will ask for
    /// `disposal` afterwards (saving what it covers when it will ask to be undone).
    mutating func begin(_ area: Area, disposal kind: GIFFrame.Disposal) throws(ImageCodecError) {
        if let (previous, previousKind) = disposal {
            switch previousKind {
            case .keep: break
            case .clear: fill(previous, with: 0)
            case .restore: restore(previous)
            }
        }
        disposal = (area, kind)
        saved = nil
        if kind == .restore, !area.isEmpty {
            var copy = try ChargedArray<UInt8>(repeating: 0, count: area.columns.count * area.rows.count * 4)
            let rowBytes = area.columns.count * 4
            pixels.elements.withUnsafeBufferPointer { canvas in
                copy.elements.withUnsafeMutableBufferPointer { copy in
                    for (index, y) in area.rows.enumerated() {
                        let from = canvas.baseAddress! + (y * width + area.columns.lowerBound) * 4
                        (copy.baseAddress! + index * rowBytes).update(from: from, count: rowBytes)
                    }
                }
            }
            saved = copy
        }
    }

    private mutating func fill(_ area: Area, with value: UInt8) {
        guard !area.isEmpty else { return }
        let width = width
        pixels.elements.withUnsafeMutableBufferPointer { canvas in
            for y in area.rows {
                (canvas.baseAddress! + (y * width + area.columns.lowerBound) * 4).update(repeating: value, count: area.columns.count * 4)
            }
        }
    }

    private mutating func restore(_ area: Area) {
        guard let saved, !area.isEmpty else { return }
        let (width, rowBytes) = (width, area.columns.count * 4)
        pixels.elements.withUnsafeMutableBufferPointer { canvas in
            saved.elements.withUnsafeBufferPointer { saved in
                for (index, y) in area.rows.enumerated() {
                    (canvas.baseAddress! + (y * width + area.columns.lowerBound) * 4).update(
                        from: saved.baseAddress! + index * rowBytes, count: rowBytes)
                }
            }
        }
    }

    /// Draws one row of palette indices (a GIF frame's row `frameRow`, starting at column
    /// `x`): each index becomes its colour, opaque, except `transparent`, which leaves the
    /// canvas as it is. `palette` has 256 entries (RGBA; a table's missing entries are opaque
    /// black, as a zero-padded table gives).
    mutating func drawIndices(
        _ row: UnsafeBufferPointer<UInt8>, x: Int, y: Int, palette: UnsafeBufferPointer<SIMD4<UInt8>>, transparent: Int?
    ) {
        guard (0..<height).contains(y), x < width else { return }
        let count = min(row.count, width - x)
        let transparent = transparent ?? -1
        let width = width
        pixels.elements.withUnsafeMutableBytes { canvas in
            let start = (y * width + x) * 4
            for column in 0..<count {
                let index = Int(row[column])
                guard index != transparent else { continue }
                canvas.storeBytes(of: palette[index], toByteOffset: start + column * 4, as: SIMD4<UInt8>.self)
            }
        }
    }

    /// Draws a decoded RGBA frame of `frameWidth` columns at `x, y`: over the canvas (WebP's
    /// alpha blending, non-premultiplied) or replacing it.
    mutating func drawRGBA(
        _ frame: UnsafeBufferPointer<UInt8>, frameWidth: Int, x: Int, y: Int, blend: Bool
    ) {
        let area = area(x: x, y: y, width: frameWidth, height: frame.count / max(1, frameWidth * 4))
        guard !area.isEmpty else { return }
        let width = width
        pixels.elements.withUnsafeMutableBufferPointer { canvas in
            for row in area.rows {
                let source = frame.baseAddress! + ((row - y) * frameWidth + (area.columns.lowerBound - x)) * 4
                let target = canvas.baseAddress! + (row * width + area.columns.lowerBound) * 4
                guard blend else {
                    target.update(from: source, count: area.columns.count * 4)
                    continue
                }
                for column in 0..<area.columns.count {
                    Self.blend(source + column * 4, over: target + column * 4)
                }
            }
        }
    }

    /// `source` over `target`, both straight alpha, in integers (the WebP container
    /// specification's formula): A = Aₛ + A_d·(255 − Aₛ)/255, C = (Cₛ·Aₛ + C_d·A_d·(255 − Aₛ)/255) / A.
    @inline(__always)
    private static func blend(_ source: UnsafePointer<UInt8>, over target: UnsafeMutablePointer<UInt8>) {
        let sourceAlpha = Int(source[3])
        if sourceAlpha == 255 {
            target.update(from: source, count: 4)
            return
        }
        if sourceAlpha == 0 { return }
        let targetWeight = (Int(target[3]) * (255 - sourceAlpha) + 127) / 255
        let alpha = sourceAlpha + targetWeight
        for channel in 0..<3 {
            let value = (Int(source[channel]) * sourceAlpha + Int(target[channel]) * targetWeight + alpha / 2) / alpha
            target[channel] = UInt8(min(255, value))
        }
        target[3] = UInt8(alpha)
    }
}
