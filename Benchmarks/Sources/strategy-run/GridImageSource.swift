import Foundation
import ImageCodec

/// What arrives for a cell: a bitmap, or encoded bytes the display decodes (as `UIImage(data:)`
/// does at first draw).
enum Payload: Sendable {
    case bitmap(Bitmap)
    case encoded(Data)
}

protocol Cancellable: Sendable {
    func cancel()
    /// The cell scrolled off before its image arrived, with parking on: by default, cancel.
    func park()
}

extension Cancellable {
    func park() { cancel() }
}

/// How one strategy gets images for the grid: the client code a team would write with it.
protocol GridImageSource: AnyObject, Sendable {
    /// On the frame thread while a cell is configured: the synchronous cache lookup (a decode
    /// done here lands in the frame).
    func cachedImage(for product: Int) -> Bitmap?
    /// Starts loading; `completion` runs once on any thread (nil: failed or cancelled).
    func load(_ product: Int, completion: @escaping @Sendable (Payload?) -> Void) -> any Cancellable
    /// On the frame thread when a payload arrives: what is shown (`.encoded` is decoded here;
    /// by default only bitmaps arrive).
    func display(_ payload: Payload) -> Bitmap?
    func startPrefetching(_ products: [Int])
    func stopPrefetching(_ products: [Int])
    /// Decodes so far, memory-cache cost and disk bytes now.
    var decodes: Int { get }
    var memoryCost: Int { get }
    var diskBytes: Int { get }
}

extension GridImageSource {
    func display(_ payload: Payload) -> Bitmap? {
        if case .bitmap(let bitmap) = payload { return bitmap }
        return nil
    }
}

/// What every strategy that downsamples makes: the aspect-fill square the 400 px cell shows,
/// cropped while decoding (what a grid app asks for; a longest side of 400 would leave a 4:3
/// photo 400×300, stretched by the cell).
let cellResize = Resize.fill(width: 400, height: 400)
