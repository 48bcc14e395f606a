import Foundation
import Hummingbird
import PermissionLedger
import PermissionModel

/// The audit queries, each answering with exactly the JSON of the `permission-ledger` command of the same
/// name with `--format json` (docs/spec/CLI.md), written by the library's `QueryJSON`.
///
/// Each takes `as-of` (`now`, `seq:N` or an RFC 3339 time), except `history`, which takes `from` and `to`
/// as the tool does (`as-of` is accepted there as another name for `to`).
///
/// | route | the tool's command |
/// |---|---|
/// | `GET /subjects/{subject}/known-handles` | `known-handles --subject S` |
/// | `GET /subjects/{subject}/questions?state=` | `questions --subject S [--state]` |
/// | `GET /questions?subject=&state=` | `questions [--subject] [--state]` |
/// | `GET /questions/{id}` | `question ID` |
/// | `GET /subjects/{subject}/permissions?require=P,P` | `permissions --subject S [--require]` |
/// | `GET /history?subject=&question=&type=&from=&to=` | `history ...` |
/// | `GET /stats` | `stats` |
struct QueryRoutes: Sendable {
    let ledger: Ledger

    func register<Context: RequestContext>(on router: Router<Context>) {
        router.get("subjects/:subject/known-handles") { request, context in try knownHandles(request, context) }
        router.get("subjects/:subject/questions") { request, context in
            try questions(request, context, subject: try context.pathParameter("subject"))
        }
        router.get("questions") { request, context in try questions(request, context, subject: nil) }
        router.get("questions/:id") { request, context in try question(request, context) }
        router.get("subjects/:subject/permissions") { request, context in try permissions(request, context) }
        router.get("history") { request, context in try history(request, context) }
        router.get("stats") { request, context in try await stats(request, context) }
    }

    func knownHandles(_ request: Request, _ context: some RequestContext) throws -> Response {
        let subject = try context.pathParameter("subject")
        let parameters = try QueryParameters(request, allowed: ["as-of"])
        let (handles, at) = try read(context, asOf: parameters.point()) { (try $0.knownHandles(subject: subject), $0.point) }
        return JSONResponse.text(QueryJSON.knownHandlesResult(handles, subject: subject, at: at))
    }

    func questions(_ request: Request, _ context: some RequestContext, subject pathSubject: String?) throws -> Response {
        let parameters = try QueryParameters(request, allowed: pathSubject == nil ? ["as-of", "state", "subject"] : ["as-of", "state"])
        let subject = pathSubject ?? parameters.text("subject")
        let state = try parameters.choice("state", as: QuestionState.self)
        let (list, at) = try read(context, asOf: parameters.point()) { (try $0.questions(subject: subject, state: state), $0.point) }
        return JSONResponse.text(QueryJSON.questionsResult(list, at: at))
    }

    func question(_ request: Request, _ context: some RequestContext) throws -> Response {
        let reference = try QueryParameters.question(try context.pathParameter("id"))
        let parameters = try QueryParameters(request, allowed: ["as-of"])
        let (status, at, id) = try read(context, asOf: parameters.point()) { view in
            let id = try reference.resolve(in: view)
            return (try view.question(id), view.point, id)
        }
        guard let status else {
            throw APIError.notFound("question \(id.uuidString) is not in the ledger as of seq \(at.seq)")
        }
        return JSONResponse.text(QueryJSON.questionResult(status, at: at))
    }

    func permissions(_ request: Request, _ context: some RequestContext) throws -> Response {
        let subject = try context.pathParameter("subject")
        let parameters = try QueryParameters(request, allowed: ["as-of", "require"])
        let required = try parameters.text("require").map(RequiredPermissions.parse)
        let (statuses, at) = try read(context, asOf: parameters.point()) { (try $0.permissions(subject: subject), $0.point) }
        return JSONResponse.text(QueryJSON.permissionsResult(statuses, subject: subject, at: at, require: required))
    }

    func history(_ request: Request, _ context: some RequestContext) throws -> Response {
        let parameters = try QueryParameters(request, allowed: ["subject", "question", "type", "from", "to", "as-of"])
        if parameters.text("to") != nil, parameters.text("as-of") != nil {
            throw APIError.badRequest("to and as-of name the same point: give one of them")
        }
        let type = try parameters.choice("type", as: EventType.self)
        let from = try parameters.point("from")
        let to = try parameters.point("to") ?? parameters.point("as-of")
        let reference = try parameters.text("question").map { text throws(APIError) in try QueryParameters.question(text) }
        let subject = parameters.text("subject")
        let events = try read(context, asOf: to) { view in
            let question = try reference?.resolve(in: view)
            let low = try from.map { try view.firstSeq(from: $0) } ?? 1
            return try collected { emit in
                try view.history(subject: subject, question: question, type: type, fromSeq: low, toSeq: view.point.seq, emit)
            }
        }
        return JSONResponse.text(QueryJSON.historyResult(events))
    }

    func stats(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let parameters = try QueryParameters(request, allowed: ["as-of"])
        let point = try parameters.point() ?? .now
        do {
            return JSONResponse.text(QueryJSON.statisticsResult(try await ledger.statistics(asOf: point)))
        } catch let error as LedgerError {
            throw LedgerFailure.apiError(for: error, logger: context.logger)
        }
    }

    /// Runs `body` with a view as of `asOf` (now when nil), answering a ``LedgerError`` (or a question
    /// abbreviation that names no single question) as ``LedgerFailure`` says.
    private func read<T>(_ context: some RequestContext, asOf: AsOf?, _ body: (LedgerView) throws -> T) throws -> T {
        try LedgerFailure.mapping(logger: context.logger) { try ledger.read(asOf: asOf ?? .now, body) }
    }
}

/// The elements a callback-style reader gives, collected in order, whatever their type.
private func collected<Element>(_ read: ((Element) throws -> Void) throws -> Void) rethrows -> [Element] {
    var elements: [Element] = []
    try read { elements.append($0) }
    return elements
}
