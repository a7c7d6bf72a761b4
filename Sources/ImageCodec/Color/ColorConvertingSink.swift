/// Converts each decoded row (CMYK to RGB, or a source profile to sRGB) before passing it on:
/// at the DCT-scaled size, ahead of the resampler, never at full size when a smaller image was
/// asked for. Used for CMYK, whose rows must become RGB before anything else, and for decodes
/// at the stored size; other conversions run on the resampled bitmap, see
/// `RowSinks.make(source:target:format:boxPreReduction:plan:)`.
final class ColorConvertingSink: RowSink {
    private let next: any RowSink
    private let conversion: ColorPlan.Conversion
    private let width: Int
    private var row: ChargedArray<UInt8>

    init(conversion: ColorPlan.Conversion, width: Int, outputChannels: Int, next: any RowSink) throws(ImageCodecError) {
        self.conversion = conversion
        self.width = width
        self.next = next
        row = try ChargedArray(repeating: 0, count: width * outputChannels)
    }

    func consume(_ input: UnsafePointer<UInt8>) {
        let (conversion, width, next) = (conversion, width, next)
        row.elements.withUnsafeMutableBufferPointer { buffer in
            let output = buffer.baseAddress!
            switch conversion {
            case .naiveCMYK(let inverted): CMYKConversion.toRGB(input, inverted: inverted, into: output, count: width)
            case .transform(let transform): transform.apply(input, output, count: width)
            }
            next.consume(output)
        }
    }

    func finish() throws(ImageCodecError) -> ChargedArray<UInt8> {
        try next.finish()
    }
}
