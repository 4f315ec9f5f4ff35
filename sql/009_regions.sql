-- Regions by outline (read.region_weights): PostGIS where the server has it, and two tables a SQL
-- user can join. era5_regions holds each outline asked for once per grid (its WKB's sha256 the key);
-- era5_region_weights each grid point's weight in it: the area of the point's cell inside the outline
-- (square degrees) x cos(latitude), the points whose cell misses the outline left out. A server
-- without PostGIS gets neither; a region read then says the extension is missing.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'postgis') THEN
        RETURN;
    END IF;
    CREATE EXTENSION IF NOT EXISTS postgis;
    CREATE TABLE IF NOT EXISTS era5_regions (
        region_id  serial      PRIMARY KEY,
        grid       text        NOT NULL,
        name       text        NOT NULL,
        source     text        NOT NULL,
        iso        text,
        digest     text        NOT NULL,
        outline    geometry(Geometry, 4326) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (grid, digest)
    );
    CREATE TABLE IF NOT EXISTS era5_region_weights (
        region_id   integer NOT NULL REFERENCES era5_regions ON DELETE CASCADE,
        location_id integer NOT NULL,
        latitude    float8  NOT NULL,
        longitude   float8  NOT NULL,
        weight      float8  NOT NULL,
        PRIMARY KEY (region_id, location_id)
    );
    -- A region is weighed by era5_weigh_region (below), which runs as the schema's owner: the HTTP
    -- reads' role (db.reader) may SELECT these tables and call it, and nothing else. It keys the outline
    -- by the sha256 of its own WKB (no caller can file an outline under another's key), checks the name,
    -- and computes the weights itself, so what it stores is only ever an outline and its true weights.
    CREATE OR REPLACE FUNCTION era5_weigh_region(p_grid text, p_name text, p_source text, p_iso text, p_outline bytea)
    RETURNS integer LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $fn$
    DECLARE
        v_digest text := encode(sha256(p_outline), 'hex');
        v_id     integer;
        v_step   float8;
        v_n      integer;  -- the lattice's columns
        v_east   integer;  -- the column of longitude 0, counted from the lattice's first
        v_rows   integer;  -- the lattice rows from the equator to a pole
        v_half   float8;
    BEGIN
        IF p_grid = 'ERA5 0.25 degree' THEN
            v_step := 0.25; v_n := 1440; v_east := 719;
        ELSIF p_grid = 'ERA5-Land 0.1 degree' THEN
            v_step := 0.1; v_n := 3600; v_east := 1799;
        ELSE
            RAISE EXCEPTION 'unknown grid %', p_grid USING ERRCODE = '22023';
        END IF;
        IF p_name IS NULL OR length(p_name) NOT BETWEEN 1 AND 200 OR p_name ~ '[[:cntrl:]]'
           OR length(coalesce(p_source, '')) > 300 OR p_source ~ '[[:cntrl:]]'
           OR length(coalesce(p_iso, '')) > 3 OR p_iso ~ '[^A-Z]' THEN
            RAISE EXCEPTION 'a region''s name is 1 to 200 printable characters, its ISO code up to 3 letters'
                USING ERRCODE = '22023';
        END IF;
        v_half := v_step / 2;
        v_rows := round(90 / v_step);
        -- Two first reads of one outline at once: the second waits, then finds the first's rows.
        PERFORM pg_advisory_xact_lock(hashtext(v_digest));
        SELECT region_id INTO v_id FROM era5_regions WHERE grid = p_grid AND digest = v_digest;
        IF FOUND THEN
            RETURN v_id;
        END IF;
        INSERT INTO era5_regions (grid, name, source, iso, digest, outline)
        VALUES (p_grid, p_name, p_source, p_iso, v_digest, ST_SetSRID(ST_GeomFromWKB(p_outline), 4326))
        RETURNING region_id INTO v_id;
        -- The cells of the outline's box (lattice rows i, columns k of any longitude range, counted from
        -- the equator and the prime meridian), those touching the outline weighed; a cell wholly inside
        -- holds step^2 without computing the intersection. A column k is longitude k x step, folded onto
        -- (-180, 180] for its location_id (core.datasets.LatLonGrid's numbering).
        WITH o AS (SELECT outline AS g FROM era5_regions WHERE region_id = v_id),
        b AS (SELECT g, floor((ST_YMin(g) + v_half) / v_step)::int AS i0, ceil((ST_YMax(g) - v_half) / v_step)::int AS i1,
                     floor((ST_XMin(g) + v_half) / v_step)::int AS k0, ceil((ST_XMax(g) - v_half) / v_step)::int AS k1
              FROM o),
        c AS (SELECT g, i, k, ST_MakeEnvelope(k * v_step - v_half, i * v_step - v_half,
                                             k * v_step + v_half, i * v_step + v_half, 4326) AS cell
              FROM b, generate_series(greatest(b.i0, -v_rows), least(b.i1, v_rows)) AS i, generate_series(b.k0, b.k1) AS k),
        a AS (SELECT i, k - v_n * ceil((k - v_n / 2) / v_n::float8)::int AS kn,
                     CASE WHEN ST_ContainsProperly(g, cell) THEN v_step * v_step
                          ELSE ST_Area(ST_Intersection(cell, g)) END AS area
              FROM c WHERE ST_Intersects(g, cell))
        INSERT INTO era5_region_weights (region_id, location_id, latitude, longitude, weight)
        SELECT v_id, (i + v_rows) * v_n + kn + v_east + 1, i * v_step, kn * v_step, sum(area * cos(radians(i * v_step)))
        FROM a WHERE area > 0 GROUP BY i, kn;
        -- Outlines posted over HTTP (source 'GeoJSON') are kept 30 days, and at most the newest 200 of
        -- them holding at most 5,000,000 weights: storing one more forgets the oldest beyond that, so no
        -- caller can fill the disk (a country's or a file's outline, read from the CLI, is never dropped).
        IF p_source = 'GeoJSON' THEN
            DELETE FROM era5_regions WHERE source = 'GeoJSON' AND created_at < now() - interval '30 days';
            DELETE FROM era5_regions WHERE region_id IN (
                SELECT region_id FROM (
                    SELECT r.region_id,
                           row_number() OVER (ORDER BY r.created_at DESC, r.region_id DESC) AS newest,
                           sum(c.points) OVER (ORDER BY r.created_at DESC, r.region_id DESC) AS weights
                    FROM era5_regions r,
                         LATERAL (SELECT count(*) AS points FROM era5_region_weights w
                                  WHERE w.region_id = r.region_id) c
                    WHERE r.source = 'GeoJSON') k
                WHERE (newest > 200 OR weights > 5000000) AND region_id <> v_id);
        END IF;
        RETURN v_id;
    END
    $fn$;
    REVOKE ALL ON FUNCTION era5_weigh_region(text, text, text, text, bytea) FROM PUBLIC;
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'era5_reader') THEN
        -- Earlier schemas let the reader INSERT here: taken back, so SELECT is all it has.
        REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON era5_regions, era5_region_weights FROM era5_reader;
        REVOKE ALL ON SEQUENCE era5_regions_region_id_seq FROM era5_reader;
        GRANT SELECT ON era5_regions, era5_region_weights TO era5_reader;
        GRANT EXECUTE ON FUNCTION era5_weigh_region(text, text, text, text, bytea) TO era5_reader;
    END IF;
END
$$;
