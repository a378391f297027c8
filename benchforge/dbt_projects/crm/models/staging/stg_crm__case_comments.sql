{#- Stressor handled here: key_drift on case_id (trimmed and upper-cased, flag is_case_id_drifted). -#}
with

source as (

    select * from {{ source('crm', 'case_comments') }}

),

renamed as (

    select
        ---------- ids
        case_comment_id,
        {{ normalize_key('case_id') }} as case_id,
        {{ normalize_key('created_by_id') }} as created_by_id,

        ---------- text
        channel,
        comment_body,

        ---------- booleans
        is_published,
        case_id <> {{ normalize_key('case_id') }} as is_case_id_drifted,

        ---------- timestamps
        created_at

    from source

)

select * from renamed
