import Foundation
import Logging

/// A swift-log handler for people reading a terminal: `time level message` on one line of
/// standard output, metadata left out (the service's request lines already say everything in
/// their message; `JSONLogHandler` keeps the fields for machines).
public struct LineLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let write: @Sendable (Data) -> Void

    /// A handler writing to standard output.
    public init(label: String) {
        self.init { line in StandardOutputSink.shared.write(line) }
    }

    /// A handler that hands each line (ending in a newline) to `write`.
    public init(write: @escaping @Sendable (Data) -> Void) {
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let time = Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))
        write(Data("\(time) \(event.level.rawValue) \(event.message)\n".utf8))
    }
}
