import Foundation

/// Turns image files into thumbnail files: read, decode at reduced scale, resample, encode,
/// write atomically. Batches run in parallel; one bad file never stops the others.
public struct Thumbnailer: Sendable {
    /// Size, format, encoding and colour of the outputs.
    public var options: ThumbnailOptions

    /// A thumbnailer producing what `options` say.
    public init(options: ThumbnailOptions) {
        self.options = options
    }

    /// `<directory>/<input name without extension>.<jpg|png>`.
    public func outputURL(for input: URL, in directory: URL) -> URL {
        directory.appendingPathComponent(input.deletingPathExtension().lastPathComponent)
            .appendingPathExtension(options.format.fileExtension)
    }

    /// Makes one thumbnail. On failure nothing is written.
    public func makeThumbnail(from input: URL, to output: URL) throws(ImageCodecError) -> ThumbnailResult {
        let start = ContinuousClock.now
        let decoder = ImageDecoder(options: DecodingOptions(maxPixelSize: options.maxPixelSize, colorManagement: options.colorManagement,
                                                            limits: options.limits))
        let bitmap = try decoder.decode(contentsOf: input)
        let data = try ImageEncoder.encode(bitmap, as: options.format, jpegOptions: options.jpeg, pngOptions: options.png)
        try FileBytes.writeAtomically(data, to: output)
        let elapsed = ContinuousClock.now - start
        return ThumbnailResult(input: input.path, output: output.path, width: bitmap.width, height: bitmap.height,
                               bytes: data.count, milliseconds: elapsed / .milliseconds(1))
    }

    /// Makes thumbnails for all inputs with at most `jobs` running at once. Results are in
    /// input order. Two inputs that would write the same output file (`a.jpg`, `a.png`) are
    /// not allowed to overwrite each other: the later one fails.
    public func run(_ inputs: [URL], outputDirectory: URL, jobs: Int,
                    progress: @escaping @Sendable (_ finished: Int, _ total: Int) -> Void = { _, _ in })
        async -> [Result<ThumbnailResult, ImageCodecError>] {
        var results = [Result<ThumbnailResult, ImageCodecError>?](repeating: nil, count: inputs.count)
        var claimed: [String: String] = [:]
        var work: [(index: Int, input: URL, output: URL)] = []
        for (index, input) in inputs.enumerated() {
            let output = outputURL(for: input, in: outputDirectory)
            if let earlier = claimed[output.path] {
                results[index] = .failure(.invalidArgument("output \(output.lastPathComponent) would overwrite the thumbnail of \(earlier)"))
            } else {
                claimed[output.path] = input.path
                work.append((index, input, output))
            }
        }
        // Largest files first: with a few big photos among many small ones, starting the big
        // ones last would leave one core working alone at the end.
        let sizes = work.map { (try? FileManager.default.attributesOfItem(atPath: $0.input.path)[.size] as? Int) ?? 0 }
        work = zip(work, sizes).sorted { $0.1 > $1.1 }.map(\.0)
        var finished = inputs.count - work.count
        await withTaskGroup(of: (Int, Result<ThumbnailResult, ImageCodecError>).self) { group in
            var next = work.makeIterator()
            func startNext() -> Bool {
                guard let item = next.next() else { return false }
                group.addTask {
                    (item.index, Result { () throws(ImageCodecError) in try makeThumbnail(from: item.input, to: item.output) })
                }
                return true
            }
            for _ in 0..<max(1, jobs) {
                if !startNext() { break }
            }
            while let (index, result) = await group.next() {
                results[index] = result
                finished += 1
                progress(finished, inputs.count)
                _ = startNext()
            }
        }
        return results.map { $0 ?? .failure(.invalidArgument("not processed")) }
    }
}
