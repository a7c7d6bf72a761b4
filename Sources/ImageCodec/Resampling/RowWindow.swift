/// Which of the rows a decoder delivers go on to be resampled, and exactly what part of them
/// the output shows: the geometry a decoder hands `RowSinks.make` once it knows the crop.
struct RowWindow: Hashable, Sendable {
    /// Pixels in each row the decoder delivers.
    var rowWidth: Int
    /// Rows the decoder delivers.
    var rowCount: Int
    /// The whole columns passed on (the rest of each row is never looked at).
    var columns: Range<Int>
    /// The whole rows passed on.
    var rows: Range<Int>
    /// What the output shows, in the coordinates of the passed-on region (a fractional offset
    /// within its first column and row, and a fractional size).
    var crop: PixelRect

    /// Every delivered pixel, all shown.
    init(width: Int, height: Int) {
        self.init(rowWidth: width, rowCount: height, crop: PixelRect(width: width, height: height))
    }

    /// The window onto `rowWidth × rowCount` rows that shows `crop` (in the rows' coordinates):
    /// the whole pixels it touches are passed on.
    init(rowWidth: Int, rowCount: Int, crop: PixelRect) {
        self.rowWidth = rowWidth
        self.rowCount = rowCount
        columns = crop.columns(within: rowWidth)
        rows = crop.rows(within: rowCount)
        self.crop = crop.offset(by: columns.lowerBound, rows.lowerBound)
    }

    /// Size of the passed-on region.
    var size: (width: Int, height: Int) { (columns.count, rows.count) }

    /// True when every delivered pixel is passed on.
    var passesEverything: Bool { columns == 0..<rowWidth && rows == 0..<rowCount }

    /// True when the output is the passed-on pixels as they are, at `target` size.
    func copies(to target: (width: Int, height: Int)) -> Bool {
        size == target && crop == PixelRect(width: target.width, height: target.height)
    }
}

/// Passes on only the window's columns and rows; the decoder delivers whole rows.
final class CroppingSink: RowSink {
    private let next: any RowSink
    private let rows: Range<Int>
    private let byteOffset: Int
    private var row = 0

    init(window: RowWindow, channels: Int, next: any RowSink) {
        self.next = next
        rows = window.rows
        byteOffset = window.columns.lowerBound * channels
    }

    func consume(_ input: UnsafePointer<UInt8>) {
        defer { row += 1 }
        guard rows.contains(row) else { return }
        next.consume(input + byteOffset)
    }

    func finish() throws(ImageCodecError) -> ChargedArray<UInt8> {
        try next.finish()
    }
}
