"""The API's endpoints: catalogue, retrieve (processes, submission with its licence and cost checks,
jobs, results) and profiles, with the JSON shapes of the real service."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from typing import Any

from era5etl.fetch import cost as costing
from localcds import synth
from localcds.handler import ID, BaseHandler, route
from localcds.jobs import Job
from localcds.protocol import (
    API_PREFIX,
    DATASETS,
    ERA5_LICENCE,
    NO_SUCH_PROCESS,
    RESULTS_NOT_READY,
    ApiError,
    iso,
    utcnow,
)


class ApiHandler(BaseHandler):
    """The CADS API under ``/api``: every endpoint but the asset download."""

    # -- shared by the endpoints: the dataset looked up, jobs as the API shows them ----------------

    def _process_or_404(self, process_id: str) -> dict[str, str]:
        dataset = DATASETS.get(process_id)
        if dataset is None:
            raise ApiError(404, {"type": NO_SUCH_PROCESS, "title": "process not found",
                                 "detail": f"dataset {process_id} not found"})
        return dataset

    @property
    def retrieve_base(self) -> str:
        return f"{self.origin}{API_PREFIX}/retrieve/v1"

    def _status_info(
        self, job: Job, *, links: list[dict[str, Any]], request: bool = False, log_: bool = False,
        log_start: datetime | None = None, dataset_messages: bool = False,
    ) -> dict[str, Any]:
        with self.cds._lock:
            info: dict[str, Any] = {
                "processID": job.process_id,
                "type": "process",
                "jobID": job.job_id,
                "status": job.status,
                "created": iso(job.created),
            }
            if job.started is not None:
                info["started"] = iso(job.started)
            if job.finished is not None:
                info["finished"] = iso(job.finished)
            info["updated"] = iso(job.updated)
            info["links"] = links
            metadata: dict[str, Any] = {"origin": "api"}
            if request:
                metadata["request"] = {"ids": job.inputs, "labels": _labels(job.inputs)}
            if log_:
                metadata["log"] = [
                    [iso(ts), msg] for ts, msg in job.log if log_start is None or ts > log_start
                ]
            if dataset_messages:
                metadata["datasetMetadata"] = {"messages": list(self.cds.messages)}
            info["metadata"] = metadata
        return info

    def _job_links(self, job: Job, rel: str = "self") -> list[dict[str, Any]]:
        href = f"{self.retrieve_base}/jobs/{job.job_id}"
        link: dict[str, Any] = {"href": href, "rel": rel, "type": "application/json"}
        if rel == "monitor":
            link["title"] = "job status info"
        links = [link]
        if job.status in ("successful", "failed", "rejected"):
            links.append({"href": f"{href}/results", "rel": "results"})
        return links

    # -- catalogue --------------------------------------------------------------------------------

    @route("GET", f"{API_PREFIX}/catalogue/v1/messages")
    def catalogue_messages(self, match: re.Match[str]) -> None:
        self._json(200, {"messages": list(self.cds.messages)})

    @route("GET", f"{API_PREFIX}/catalogue/v1/datasets")
    def catalogue_datasets(self, match: re.Match[str]) -> None:
        self._json(200, {
            "type": "FeatureCollection",
            "collections": [self._collection(cid) for cid in DATASETS],
            "links": [{"rel": "self", "type": "application/json", "href": self.full_url}],
            "numberMatched": len(DATASETS), "numberReturned": len(DATASETS),
        })

    @route("GET", f"{API_PREFIX}/catalogue/v1/collections/{ID}")
    def catalogue_collection(self, match: re.Match[str]) -> None:
        cid = match["id"]
        if cid not in DATASETS:
            raise ApiError(404, {"type": "not found", "title": "collection not found",
                                 "detail": f"collection {cid} not found"})
        self._json(200, self._collection(cid))

    def _collection(self, cid: str) -> dict[str, Any]:
        dataset = DATASETS[cid]
        base = f"{self.origin}{API_PREFIX}"
        return {
            "type": "Collection",
            "id": cid,
            "stac_version": "1.0.0",
            "title": dataset["title"],
            "description": dataset["description"],
            "license": "other",
            "extent": {
                "spatial": {"bbox": [[0.0, -89.0, 360.0, 89.0]]},
                "temporal": {"interval": [["1940-01-01T00:00:00Z", None]]},
            },
            "published": "2018-06-14T00:00:00Z",
            "updated": iso(utcnow()) + "Z",
            "links": [
                {"rel": "self", "type": "application/json",
                 "href": f"{base}/catalogue/v1/collections/{cid}"},
                {"rel": "retrieve", "type": "application/json",
                 "href": f"{base}/retrieve/v1/processes/{cid}"},
                {"rel": "root", "type": "application/json", "href": f"{base}/catalogue/v1/"},
            ],
        }

    @route("GET", f"{API_PREFIX}/catalogue/v1/vocabularies/licences")
    def catalogue_licences(self, match: re.Match[str]) -> None:
        lid, rev = ERA5_LICENCE
        self._json(200, {"licences": [
            {"id": lid, "revision": rev, "label": "Licence to use Copernicus Products", "scope": "dataset"},
        ]})

    # -- retrieve ---------------------------------------------------------------------------------

    @route("GET", f"{API_PREFIX}/retrieve/v1/processes")
    def processes(self, match: re.Match[str]) -> None:
        self._json(200, {
            "processes": [
                {"id": pid, "title": d["title"], "version": "1.0.0", "jobControlOptions": ["async-execute"],
                 "outputTransmission": ["reference"],
                 "links": [{"href": f"{self.retrieve_base}/processes/{pid}", "rel": "process",
                            "type": "application/json", "title": "process description"}]}
                for pid, d in DATASETS.items()
            ],
            "links": [{"href": self.full_url, "rel": "self", "type": "application/json"}],
        })

    @route("GET", f"{API_PREFIX}/retrieve/v1/processes/{ID}")
    def process(self, match: re.Match[str]) -> None:
        pid = match["id"]
        dataset = self._process_or_404(pid)
        self._json(200, {
            "title": dataset["title"],
            "description": dataset["description"],
            "id": pid,
            "version": "1.0.0",
            "jobControlOptions": ["async-execute"],
            "outputTransmission": ["reference"],
            "links": [
                {"href": f"{self.retrieve_base}/processes/{pid}", "rel": "self"},
                {"href": f"{self.retrieve_base}/processes/{pid}/execution", "rel": "execute",
                 "type": "application/json", "title": "process execution"},
            ],
            "inputs": _input_schemas(),
            "outputs": {"asset": {
                "title": "Asset", "description": "Downloadable asset description",
                "schema": {"type": "object", "properties": {"value": {
                    "type": "object", "properties": {
                        "type": {"type": "string"}, "href": {"type": "string"},
                        "file:checksum": {"type": "string"}, "file:size": {"type": "integer"},
                        "file:local_path": {"type": "string"},
                    }}}},
            }},
            "metadata": {"datasetMetadata": {"messages": list(self.cds.messages)}},
        }, headers={"Cache-Control": "public, max-age=60"})

    @route("POST", f"{API_PREFIX}/retrieve/v1/processes/{ID}/execution")
    def execute(self, match: re.Match[str]) -> None:
        body = self._body()
        submitted = body.get("inputs") if isinstance(body, dict) else None
        fault = self._fault("submit", submitted if isinstance(submitted, dict) else None)
        self._authenticate()
        pid = match["id"]
        self._process_or_404(pid)
        if not isinstance(body, dict) or not isinstance(body.get("inputs", {}), dict):
            raise ApiError(422, {"type": "invalid request", "title": "invalid request",
                                 "detail": "the body must be {\"inputs\": {...}}"})
        inputs: dict[str, Any] = body.get("inputs") or {}
        try:
            synth.parse_request(inputs, pid)
        except synth.RequestError as exc:
            raise ApiError(400, {"type": "invalid request", "title": "invalid request",
                                 "detail": str(exc)}) from None
        accepted = self.cds.accepted_licences | {
            (lic.get("id"), lic.get("revision")) for lic in body.get("acceptedLicences") or []
            if isinstance(lic, dict)
        }
        if ERA5_LICENCE not in accepted:
            missing = [{"id": ERA5_LICENCE[0], "revision": ERA5_LICENCE[1]}]
            raise ApiError(403, {"type": "permission denied", "title": "required licences not accepted",
                                 "detail": f"please accept the following licences to proceed: {missing}"})
        cost = costing.estimate(inputs)
        if cost.value > costing.limit_for(cost.data_format, self.cds.cost_limits):
            # The CDS's words since 2024; it says neither the cost nor the limit.
            raise ApiError(403, {"type": "permission denied", "title": "cost limits exceeded",
                                 "detail": "Your request is too large, please reduce your selection."})
        job = self.cds.create_job(pid, inputs)
        links = [{"href": self.full_url, "rel": "self"}, *self._job_links(job, rel="monitor")]
        info = self._status_info(job, links=links, dataset_messages=True)
        self.cds.start_job(job)
        if fault is not None and fault.kind == "drop_after":
            self._drop()
        self._json(201, info, headers={"Location": f"{self.retrieve_base}/jobs/{job.job_id}"})

    @route("GET", f"{API_PREFIX}/retrieve/v1/jobs")
    def jobs(self, match: re.Match[str]) -> None:
        self._authenticate()
        _, query = self.split
        wanted = set(query.get("status", []))
        limit = int((query.get("limit") or ["10"])[0])
        newest_first = (query.get("sortby") or ["-created"])[0] != "created"
        with self.cds._lock:
            jobs = [j for j in self.cds.jobs.values()
                    if not j.dismissed and (not wanted or j.status in wanted)]
        jobs.sort(key=lambda j: j.created, reverse=newest_first)
        self._json(200, {
            "jobs": [self._status_info(j, links=self._job_links(j)) for j in jobs[:limit]],
            "links": [{"href": self.full_url, "rel": "self", "title": "list of submitted jobs"}],
            "metadata": {"totalCount": len(jobs)},
        })

    @route("POST", f"{API_PREFIX}/retrieve/v1/jobs/delete")
    def jobs_delete(self, match: re.Match[str]) -> None:
        body = self._body()
        self._authenticate()
        ids = body.get("job_ids", []) if isinstance(body, dict) else []
        dismissed = []
        for job_id in ids:
            job = self.cds.job_or_404(str(job_id))
            self.cds.dismiss(job)
            dismissed.append(self._status_info(job, links=self._job_links(job)))
        self._json(200, {"jobs": dismissed})

    @route("GET", f"{API_PREFIX}/retrieve/v1/jobs/{ID}")
    def job(self, match: re.Match[str]) -> None:
        self._authenticate()
        job = self.cds.job_or_404(match["id"])
        self._fault("status", job.inputs)
        _, query = self.split

        def flag(name: str) -> bool:
            return (query.get(name) or ["false"])[0].lower() in ("true", "1", "yes")

        start = None
        if query.get("logStartTime"):
            start = datetime.fromisoformat(query["logStartTime"][0])
            start = start.replace(tzinfo=UTC) if start.tzinfo is None else start
        self._json(200, self._status_info(job, links=self._job_links(job), request=flag("request"),
                                          log_=flag("log"), log_start=start))

    @route("DELETE", f"{API_PREFIX}/retrieve/v1/jobs/{ID}")
    def job_delete(self, match: re.Match[str]) -> None:
        self._authenticate()
        job = self.cds.job_or_404(match["id"])
        self.cds.dismiss(job)
        self._json(200, self._status_info(job, links=self._job_links(job)))

    @route("GET", f"{API_PREFIX}/retrieve/v1/jobs/{ID}/results")
    def job_results(self, match: re.Match[str]) -> None:
        self._authenticate()
        job = self.cds.job_or_404(match["id"])
        fault = self._fault("results", job.inputs)
        if fault is not None and fault.kind == "expire":
            self.cds.expire(job.job_id)
        with self.cds._lock:
            status, asset, errors, expired = job.status, dict(job.asset or {}), list(job.errors), job.expired
        if expired:
            raise ApiError(404, {"type": "results expired", "title": "results expired",
                                 "detail": f"the results of job {job.job_id} have expired"})
        if status == "successful":
            asset["href"] = f"{self.origin}{asset['href']}"
            self._json(200, {"asset": {"value": asset}})
        elif status in ("failed", "rejected"):
            title = "The job has failed" if status == "failed" else "The job has been rejected"
            self._error(400, {"type": "job results failed", "title": title,
                              "traceback": "\n".join(msg for _, msg in errors)})
        else:
            raise ApiError(404, {"type": RESULTS_NOT_READY, "title": "job results not ready",
                                 "detail": f"status of {job.job_id} is '{status}'"})

    # -- profiles ---------------------------------------------------------------------------------

    @route("POST", f"{API_PREFIX}/profiles/v1/account/verification/pat")
    def verify_pat(self, match: re.Match[str]) -> None:
        self._drain()
        self._authenticate()
        self._json(200, {"sub": str(uuid.uuid5(uuid.NAMESPACE_URL, self.cds.key)), "role": "user"})

    @route("GET", f"{API_PREFIX}/profiles/v1/account/licences")
    def accepted_licences(self, match: re.Match[str]) -> None:
        self._authenticate()
        with self.cds._lock:
            licences = sorted(self.cds.accepted_licences)
        self._json(200, {"licences": [{"id": lid, "revision": rev} for lid, rev in licences]})

    @route("PUT", f"{API_PREFIX}/profiles/v1/account/licences/{ID}")
    def accept_licence(self, match: re.Match[str]) -> None:
        body = self._body()
        self._authenticate()
        revision = int(body.get("revision", 0)) if isinstance(body, dict) else 0
        with self.cds._lock:
            self.cds.accepted_licences.add((match["id"], revision))
        self._json(201, {"id": match["id"], "revision": revision})


def _labels(inputs: dict[str, Any]) -> dict[str, Any]:
    """Human labels of the request, as the job page shows them (keys title-cased, values as given)."""
    return {key.replace("_", " ").capitalize(): value for key, value in inputs.items()}


def _input_schemas() -> dict[str, Any]:
    def enum(title: str, values: list[str]) -> dict[str, Any]:
        return {"title": title, "schema": {"type": "array", "items": {"type": "string", "enum": values}}}

    return {
        "product_type": enum("Product type", ["reanalysis"]),
        "variable": enum("Variable", sorted(synth.META)),
        "year": enum("Year", [str(y) for y in range(1940, datetime.now(UTC).year + 1)]),
        "month": enum("Month", [f"{m:02d}" for m in range(1, 13)]),
        "day": enum("Day", [f"{d:02d}" for d in range(1, 32)]),
        "time": enum("Time", [f"{h:02d}:00" for h in range(24)]),
        "area": {"title": "Sub-region extraction",
                 "schema": {"type": "array", "minItems": 4, "maxItems": 4, "items": {"type": "number"}}},
        "grid": {"title": "Grid", "schema": {"type": "array", "minItems": 2, "maxItems": 2,
                                             "items": {"type": "string"}}},
        "data_format": {"title": "Data format", "schema": {"type": "string", "enum": ["grib", "netcdf"]}},
        "download_format": {"title": "Download format",
                            "schema": {"type": "string", "enum": ["unarchived", "zip"]}},
    }
