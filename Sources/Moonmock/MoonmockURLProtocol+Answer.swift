import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MoonmockCore

/// What the engine made of one request, and what to do if no rule matched.
struct Answer: Sendable {
    let exchange: Exchange
    /// The owner's unmatched policy when the engine ran.
    let unmatched: UnmatchedPolicy

    /// Runs `request` through `owner`'s engine and logs it.
    init(_ request: URLRequest, _ owner: Moonmock) {
        exchange = owner.engine.handle(MockRequest(request))
        unmatched = owner.unmatchedPolicy
        let logging = owner.logging
        if exchange.matched {
            logging.log(exchange.request, status: exchange.response.fault == nil ? exchange.response.status : 0, ruleID: exchange.ruleID)
        } else {
            switch unmatched {
            case .fail: logging.log(exchange.request, status: 0, ruleID: nil)
            case .notImplemented: logging.log(exchange.request, status: 501, ruleID: nil)
            case .passThrough: logging.log(exchange.request, status: nil, ruleID: nil)
            }
        }
    }
}
