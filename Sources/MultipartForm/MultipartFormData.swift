import Foundation

/// A `multipart/form-data` request body (RFC 7578): text parts such as a JSON `params` part,
/// and file parts with a file name and content type.
///
/// ```swift
/// var form = MultipartFormData()
/// try form.addText(name: "params", value: #"{"title":"Chair"}"#, contentType: "application/json")
/// for image in set.images {
///     try form.addFile(name: "images[]", fileName: image.fileName, contentType: image.mimeType, data: image.data)
/// }
/// request.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
/// request.httpBody = form.body()          // or: try form.write(to: fileURL) for upload(fromFile:)
/// ```
///
/// The boundary is fixed when the form is created, so a `Content-Type` header taken early stays
/// valid; a part that contains it is refused rather than the boundary silently changed.
public struct MultipartFormData: Sendable, Hashable {
    /// One part: a text field (no file name) or a file.
    public struct Part: Sendable, Hashable {
        /// The form field name (`name=` of `Content-Disposition`).
        public let name: String
        /// The file name of a file part (`filename=`); nil for a text part.
        public let fileName: String?
        /// The part's `Content-Type`; nil leaves it out (text/plain for a text part).
        public let contentType: String?
        /// The part's bytes, sent as they are.
        public let data: Data
    }

    /// The delimiter between parts, without the leading `--`.
    public let boundary: String
    /// The parts in the order they were added, which is the order they are sent.
    public private(set) var parts: [Part] = []

    /// A form with a random boundary (`image-engine-` and 24 letters and digits): unique per
    /// request, so no image can contain it by chance.
    public init() {
        boundary = Self.randomBoundary()
    }

    /// A form with a chosen boundary, for reproducible bodies (tests, signed requests).
    ///
    /// - Throws: ``MultipartFormDataError/invalidBoundary(_:)`` unless the boundary is 1–70
    ///   characters from RFC 2046's set (letters, digits and `'()+_,-./:=? `) and does not end
    ///   with a space.
    public init(boundary: String) throws(MultipartFormDataError) {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'()+_,-./:=? ")
        guard (1...70).contains(boundary.count), boundary.allSatisfy(allowed.contains), boundary.last != " " else {
            throw .invalidBoundary(boundary)
        }
        self.boundary = boundary
    }

    /// The `Content-Type` header value for the request.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// Adds a text field, e.g. a JSON `params` part with `contentType: "application/json"`.
    ///
    /// - Throws: ``MultipartFormDataError/boundaryInPart(name:)`` if `value` contains the
    ///   boundary; ``MultipartFormDataError/invalidContentType(_:)`` if `contentType` could end
    ///   the header line.
    public mutating func addText(name: String, value: String, contentType: String? = nil) throws(MultipartFormDataError) {
        try add(Part(name: name, fileName: nil, contentType: contentType, data: Data(value.utf8)))
    }

    /// Adds a file part.
    ///
    /// - Throws: ``MultipartFormDataError/boundaryInPart(name:)`` if `data` contains the
    ///   boundary; ``MultipartFormDataError/invalidContentType(_:)`` if `contentType` could end
    ///   the header line.
    public mutating func addFile(name: String, fileName: String, contentType: String, data: Data) throws(MultipartFormDataError) {
        try add(Part(name: name, fileName: fileName, contentType: contentType, data: data))
    }

    private mutating func add(_ part: Part) throws(MultipartFormDataError) {
        if let contentType = part.contentType,
            contentType.isEmpty || contentType.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value > 0x7E })
        {
            throw .invalidContentType(contentType)
        }
        // A boundary inside a part would end it early for the receiver.
        if part.data.range(of: Data(("--" + boundary).utf8)) != nil { throw .boundaryInPart(name: part.name) }
        parts.append(part)
    }

    /// The whole body in memory.
    public func body() -> Data {
        var body = Data()
        forEachChunk { body.append($0) }
        return body
    }

    /// Writes the body to `url` part by part, without building it in memory, for
    /// `URLSession.upload(for:fromFile:)`. The file appears complete or not at all: it is
    /// written beside `url` under a temporary name and renamed into place.
    ///
    /// - Throws: ``MultipartFormDataError/io(path:errno:)`` naming `url`.
    public func write(to url: URL) throws(MultipartFormDataError) {
        try AtomicFileWriter.create(at: url) { (sink) throws(MultipartFormDataError) in try forEachChunk(sink) }
    }

    /// The body in order: each part's header, bytes and CRLF, then the closing delimiter.
    private func forEachChunk<Failure: Error>(_ body: (Data) throws(Failure) -> Void) throws(Failure) {
        for part in parts {
            try body(Data(header(for: part).utf8))
            try body(part.data)
            try body(Data("\r\n".utf8))
        }
        try body(Data("--\(boundary)--\r\n".utf8))
    }

    private func header(for part: Part) -> String {
        var disposition = "form-data; name=\"\(Self.quoted(part.name))\""
        if let fileName = part.fileName { disposition += "; filename=\"\(Self.quoted(fileName))\"" }
        var header = "--\(boundary)\r\nContent-Disposition: \(disposition)\r\n"
        if let contentType = part.contentType { header += "Content-Type: \(contentType)\r\n" }
        return header + "\r\n"
    }

    /// Escapes what would end the quoted string or the header line (RFC 7578 §4.2 leaves
    /// percent-encoding of `"` and CR/LF as the interoperable choice).
    private static func quoted(_ value: String) -> String {
        value.replacingOccurrences(of: "\"", with: "%22").replacingOccurrences(of: "\r", with: "%0D")
            .replacingOccurrences(of: "\n", with: "%0A")
    }

    private static func randomBoundary() -> String {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return "image-engine-" + String((0..<24).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }
}
